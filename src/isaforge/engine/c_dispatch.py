"""isaforge_engine.inc: the data-only tables (kernels, interfaces, roles, each op's signature) that the one
dispatcher every engine compiles, engine_dispatch.c, includes."""

from __future__ import annotations

from pathlib import Path

from isaforge.catalogue import HOST_ARCH, SCALABLE_KINDS, Catalogue, c_string
from isaforge.engine.c_header import GENERATED, header_name
from isaforge.engine.model import Engine, EngineOp, Kernel
from isaforge.engine.plan import Plan

# The dispatch's tables, included by DISPATCH_SOURCE (the one dispatcher every engine compiles): one engine per
# output directory.
DISPATCH_CODE = "isaforge_engine.inc"
DISPATCH_SOURCE = Path(__file__).resolve().parents[1] / "engine_dispatch.c"
COMPARISONS = {"==": "EQ", "!=": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}  # ISF_ENGINE_<name>


def dispatch_owner(text: str) -> str:
    """The engine an existing isaforge_engine.inc was generated for (its second line)."""
    lines = text.splitlines()
    return lines[1].removeprefix("/* engine: ").removesuffix(" */") if len(lines) > 1 else ""


def render_dispatch(cat: Catalogue, p: Plan) -> str:
    """The tables DISPATCH_SOURCE reads: data only (the logic is that file's, the same for every engine)."""
    e = p.engine
    rows, interfaces, first = [], [], [0]
    for op in e.ops.values():
        for k in (k for k in p.kernels if k.op == op.name):
            i = len(rows)
            interfaces.append(_interface(e, op, k, i))
            rows.append(_kernel_row(cat, p, op, k, i))
        first.append(len(rows))
    role_rows, first_role = [], [0]
    for op in e.ops.values():
        for r in op.roles:
            cmp = f"ISF_ENGINE_{COMPARISONS[r.cmp]}" if r.param else "ISF_ENGINE_ANY"
            role_rows.append(f"    {{{c_string(r.name)}, {cmp}, {r.value}u}},")
        first_role.append(len(role_rows))
    ops = []
    for op in e.ops.values():
        sig = op.signature
        ret = "" if sig.returns == "void" else "return"
        ops.append(
            f"    X({op.index}, {op.name}, {sig.returns}, ({sig.params}), ({sig.args}), {ret}, {op.selector or 0})"
        )
    return "\n".join(
        [
            f"/* {GENERATED.format(catalogue=e.path.name)} */",
            f"/* engine: {e.name} */",
            "/* clang-format off */",
            f'#include "{header_name(e)}"',
            "",
            f"#define ISF_ENGINE_PREFIX {e.name}",
            f"#define ISF_ENGINE_NAME {c_string(e.name)}",
            f"#define ISF_ENGINE_DISABLE {c_string(e.disable_variable)}",
            f"#define ISF_ENGINE_OP_COUNT {len(e.ops)}",
            f"#define ISF_ENGINE_KERNEL_COUNT {len(rows)}",
            f"#define ISF_ENGINE_ROLE_TOTAL {len(role_rows)}",
            "/* X(index, op, return type, (params), (args), `return` or nothing, the parameter its roles read or 0) */",
            "#define ISF_ENGINE_OPS(X) \\",
            " \\\n".join(ops),
            "",
            *interfaces,
            "static const isf_engine_kernel isf_engine_kernels[ISF_ENGINE_KERNEL_COUNT] = {",
            *rows,
            "};",
            f"static const size_t isf_engine_first[ISF_ENGINE_OP_COUNT + 1] = {{{', '.join(map(str, first))}}};",
            "static const char *const isf_engine_op_names[ISF_ENGINE_OP_COUNT] = {"
            f"{', '.join(c_string(o) for o in e.ops)}}};",
            "static const isf_engine_role isf_engine_roles[ISF_ENGINE_ROLE_TOTAL] = {",
            *role_rows,
            "};",
            "static const size_t isf_engine_first_role[ISF_ENGINE_OP_COUNT + 1] = {"
            f"{', '.join(map(str, first_role))}}};",
            "",
        ]
    )


def _interface(e: Engine, op: EngineOp, k: Kernel, i: int) -> str:
    fields = [c_string(k.name), k.symbol, *[symbol for _, symbol in k.members], *[f"{v}u" for _, v in k.packing]]
    return f"static const {e.name}_{op.name}_kernel isf_engine_interface_{i} = {{{', '.join(fields)}}};"


def _kernel_row(cat: Catalogue, p: Plan, op: EngineOp, k: Kernel, i: int) -> str:
    req = 0 if p.arch == HOST_ARCH else cat.mask(cat.variant_features(p.arch, k.variant))
    scalable = SCALABLE_KINDS[cat.variant(k.variant).scalable]
    cores = [cat.cpu_part(core) for core in k.tuned_for]
    tuned = ", ".join(f"ISF_CORE(0x{c.implementer:x}, 0x{c.part:x})" for c in cores) or "0"
    names = [r.name for r in op.roles]
    roles = sum(1 << names.index(r) for r in k.roles)
    return (
        f"    {{{c_string(k.name)}, {c_string(k.variant)}, {k.mr}, {k.nr}, {k.kr}, {scalable}, 0x{req:x}u, "
        f"{{{tuned}}}, 0x{roles:x}u, (isf_engine_fn){k.symbol}, &isf_engine_interface_{i}}},"
    )
