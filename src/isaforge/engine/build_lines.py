"""What the build system makes of a plan: one `name|c_args|sources` line per static library, which Meson's
run_command and CMake's execute_process read from the generator's output."""

from __future__ import annotations

from pathlib import Path

from isaforge import variant_route
from isaforge.catalogue import FEATURE_SET_JOIN, REFERENCE, VARIANT_DEFINE, Catalogue
from isaforge.engine.plan import Plan
from isaforge.variant_route import Route

# Under OUTDIR: the assembler gcc runs for variants whose instructions GNU as lacks (variant_route.py).
ASSEMBLER_WRAPPER_DIR = "isaforge-as"


def library_lines(cat: Catalogue, p: Plan, outdir: Path) -> list[str]:
    """`name|c_args|sources`: one static library per built variant or feature set with only its flags, then the
    references at the baseline (the build's own flags). The dispatch is c_dispatch.DISPATCH_SOURCE, which the build
    adds."""
    lines = []
    includes = [f"-I{d}" for d in p.engine.include_dirs]
    for label in [*p.built, REFERENCE]:
        sources = dict.fromkeys(str(src) for k in p.kernels if k.variant == label for src in k.sources)
        if label == REFERENCE:
            sources.update(dict.fromkeys(str(src) for src in p.engine.shared_sources))
            lines.append(f"{p.engine.name}_reference|{' '.join(includes)}|{' '.join(sources)}")
            continue
        route = p.routes.get(label) or Route(tuple(cat.variant_flags(p.arch, p.compiler, label)))
        flags = [*route.flags, *includes, f"-D{VARIANT_DEFINE}={label}"]
        if route.encode and p.compiler == "gcc":
            flags += variant_route.assembler_wrapper(outdir / ASSEMBLER_WRAPPER_DIR, p.arch, list(p.cc))
        name = f"{p.engine.name}_{p.arch}_{label.replace(FEATURE_SET_JOIN, '_')}"
        lines.append(f"{name}|{' '.join(flags)}|{' '.join(sources)}")
    return lines
