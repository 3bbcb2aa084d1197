"""isaforge-kernels-<name>.json: the built kernels of one arch and compiler, what each requires and serves, and what
was dropped; `isaforge test-qemu` reads it (libisaforge's own build writes the same format, codegen.py)."""

from __future__ import annotations

import json

from isaforge.catalogue import HOST_ARCH, Catalogue
from isaforge.engine.model import Engine, Kernel
from isaforge.engine.plan import Plan


def manifest_name(e: Engine) -> str:
    return f"isaforge-kernels-{e.name}.json"


def render_manifest(cat: Catalogue, p: Plan) -> str:
    def requires(k: Kernel) -> list[str]:
        return [] if p.arch == HOST_ARCH else sorted(cat.variant_features(p.arch, k.variant))

    kernels = [
        {"name": k.name, "op": k.op, "variant": k.variant, "requires": requires(k), "tuned_for": list(k.tuned_for),
         "roles": list(k.roles) or [r.name for r in p.engine.ops[k.op].roles], "packing": dict(k.packing)}
        for k in p.kernels
    ]  # fmt: skip
    doc = {
        "owner": p.engine.name,
        "arch": p.arch,
        "compiler": p.compiler,
        "catalogue": str(p.engine.path),
        "kernels": kernels,
        "packing_groups": packing_groups(p),
        "dropped": p.dropped,
    }
    return json.dumps(doc, indent=1) + "\n"


def packing_groups(p: Plan) -> dict[str, list[list[str]]]:
    """Per op with a packing contract: the kernels that read the same packed operands (equal packing), in groups."""
    out: dict[str, list[list[str]]] = {}
    for op in (o for o in p.engine.ops.values() if o.packing):
        groups: dict[tuple[tuple[str, int], ...], list[str]] = {}
        for k in (k for k in p.kernels if k.op == op.name):
            groups.setdefault(k.packing, []).append(k.name)
        out[op.name] = list(groups.values())
    return out
