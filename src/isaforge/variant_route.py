"""How one compiler builds a variant's sources: its catalogue flags when the compiler takes them, else, for assembly
alone, the extensions handed to the assembler and what the assembler lacks rewritten as `.inst` words.

gcc 12 knows no `+sme`: the variant's -march stops its driver before anything is compiled, while GNU as 2.40 knows
SME1 (not SME2). So an SME variant whose sources are all `.S` is built with the baseline's C flags, `-Wa,-march=`
with every extension of the variant the assembler accepts (each tried alone), and, when the variant's own
instruction is still rejected, an assembler wrapper (`-B<dir>`, gcc's search path for `as`) that runs the `.inst`
encoder on what gcc hands it. Its objects still declare the variant, so check-isolation holds them to it.

Standard library only: enginegen.py runs it from a bare tree or an installed prefix.
"""

from __future__ import annotations

import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from isaforge.catalogue import Catalogue

INST_SCRIPT = Path(__file__).resolve().with_name("inst.py")


@dataclass(frozen=True)
class Route:
    """A variant's compile flags for one compiler, and whether its assembly goes through the .inst encoder."""

    flags: tuple[str, ...]
    encode: bool = False
    note: str = ""  # how it is built, when not with the catalogue's flags


def choose(
    cat: Catalogue, arch: str, compiler: str, label: str, cc: list[str], *, c_sources: bool, asm_sources: bool
) -> Route | str:
    """The route for `label` (a variant or feature set), or why the compiler cannot build its sources."""
    variant = cat.variant(label)
    flags = cat.variant_flags(arch, compiler, label)
    if compiles(cc, flags, variant.probe, ".c"):
        encode = asm_sources and not _assembles(cc, flags, _asm_probe(cat, arch, label))
        return Route(tuple(flags), encode, "the assembler rejects its instructions: .inst encoder" if encode else "")
    reason = f"{' '.join(cc)} cannot compile {' + '.join(variant.requires)} code with {' '.join(flags)}"
    if c_sources or not asm_sources:
        return reason
    return _assembler_route(cat, arch, compiler, label, cc)


def _assembler_route(cat: Catalogue, arch: str, compiler: str, label: str, cc: list[str]) -> Route:
    baseline = cat.baseline_flags(arch, compiler)
    march = next(f for f in cat.variant_flags(arch, compiler, label) if f.startswith("-march="))
    level, *extensions = march.removeprefix("-march=").split("+")
    known = [e for e in extensions if compiles(cc, [*baseline, f"-Wa,-march={level}+{e}"], "int x;\n", ".c")]
    told = f"-Wa,-march={level}{''.join('+' + e for e in known)}"
    flags = (*baseline, told)
    encode = not _assembles(cc, list(flags), _asm_probe(cat, arch, label))
    how = f"C at the baseline, {told} for its .S" + (", the rest through the .inst encoder" if encode else "")
    return Route(flags, encode, how)


def _asm_probe(cat: Catalogue, arch: str, label: str) -> str:
    """One instruction of each variant the label is built from (a feature set has its features' variants')."""
    names = [label] if label in cat.variants else [cat.variant(f).name for f in cat.variant(label).requires]
    probes = [cat.variants[n].asm_probe.get(arch, "") for n in names if n in cat.variants]
    return "\n".join(p for p in dict.fromkeys(probes) if p)


def _assembles(cc: list[str], flags: list[str], instructions: str) -> bool:
    return not instructions or compiles(cc, flags, f"\t.text\n{instructions}\n", ".S")


def compiles(cc: list[str], flags: list[str], code: str, suffix: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="isaforge-probe-") as tmp:
        src = Path(tmp) / f"probe{suffix}"
        src.write_text(code)
        cmd = [*cc, *flags, "-c", str(src), "-o", str(Path(tmp) / "probe.o")]
        return subprocess.run(cmd, capture_output=True, text=True, check=False).returncode == 0


# -- the assembler wrapper ------------------------------------------------------------------------------------------
WRAPPER = """#!{python}
# Written by isaforge (variant_route.py): gcc runs this as its assembler (-B{folder}/) for the variants whose
# instructions the real one rejects. It rewrites them as .inst words (inst.py) and runs {real}.
import os, subprocess, sys, tempfile
sys.dont_write_bytecode = True  # the isaforge tree may be an installed prefix, which stays as installed
sys.path.insert(0, {package!r})
from isaforge import inst
args = sys.argv[1:]
sources = [i for i, a in enumerate(args) if a.endswith((".s", ".S")) and not a.startswith("-")]
with tempfile.TemporaryDirectory(prefix="isaforge-as-") as tmp:
    if sources:
        i = sources[-1]
        text = open(args[i], encoding="utf-8", errors="surrogateescape").read()
    else:  # -pipe: the source on stdin
        text = sys.stdin.read()
        i = len(args)
        args.append("")
    out = os.path.join(tmp, "encoded.s")
    try:
        rewritten = inst.rewrite({arch!r}, text, args[i] or "<stdin>")
    except inst.InstError as exc:
        sys.exit(f"isaforge .inst encoder: {{exc}}")
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(rewritten)
    args[i] = out
    sys.exit(subprocess.run([{real!r}, *args]).returncode)
"""


def assembler_wrapper(folder: Path, arch: str, cc: list[str]) -> list[str]:
    """Write the wrapper into `folder` and return the flag that makes gcc use it."""
    real = subprocess.run([*cc, "-print-prog-name=as"], capture_output=True, text=True, check=False).stdout.strip()
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "as"
    text = WRAPPER.format(
        python=sys.executable, folder=folder, real=real or "as", package=str(INST_SCRIPT.parents[1]), arch=arch
    )
    if not script.is_file() or script.read_text() != text:
        script.write_text(text)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return [f"-B{folder}/"]
