"""Which cells to run: `--only` selections over the matrix, and whether this machine can run a cell at all."""

from __future__ import annotations

import fnmatch
import shutil
from collections.abc import Sequence
from pathlib import Path

from isaforge import process
from isaforge.catalogue import Catalogue, load
from isaforge.errors import IsaforgeError
from isaforge.matrix.definition import Cell, Matrix, MatrixError
from isaforge.toolchains.probing import INSTALL_SCRIPT, probe

FILTER_KEYS = ("cell", "target", "compiler", "build", "toolchain", "cpu")


def parse_only(exprs: Sequence[str]) -> dict[str, list[str]]:
    """`--only` expressions → {key: [values]}. Words are separated by spaces; a word is `key=v1,v2` or a bare cell
    name (`cell=`); values may be globs. Repeated keys add values."""
    conditions: dict[str, list[str]] = {}
    for expr in exprs:
        for word in expr.split():
            key, sep, values = word.partition("=")
            if not sep:
                key, values = "cell", word
            if key not in FILTER_KEYS:
                raise MatrixError(f"--only: unknown key {key!r} in {word!r}; use one of: {', '.join(FILTER_KEYS)}")
            vals = [v for v in values.split(",") if v]
            if not vals:
                raise MatrixError(f"--only: {word!r} names no value")
            conditions.setdefault(key, []).extend(vals)
    return conditions


def _known_values(matrix: Matrix, cat: Catalogue) -> dict[str, list[str]]:
    every_cpu = list(dict.fromkeys(cpu for models in cat.cpus.values() for cpu in models))
    return {
        "cell": matrix.names,
        "target": list(dict.fromkeys([*(c.target for c in matrix.cells), *(c.arch for c in matrix.cells)])),
        "compiler": list(cat.compilers),
        "build": list(matrix.build_types),
        "toolchain": list(dict.fromkeys(c.toolchain_name for c in matrix.cells)),
        "cpu": every_cpu,
    }


def _is_glob(value: str) -> bool:
    return any(ch in value for ch in "*?[")


def _matches(value: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(value, p) for p in patterns)


def select(matrix: Matrix, exprs: Sequence[str], cat: Catalogue | None = None) -> list[Cell]:
    """The cells `--only` picks (all without it), CPU models narrowed by any `cpu=`; MatrixError if it names an
    unknown value or picks nothing."""
    cat = cat or load()
    conditions = parse_only(exprs)
    known = _known_values(matrix, cat)
    for key, values in conditions.items():
        for value in values:
            if _is_glob(value):
                if not any(fnmatch.fnmatchcase(k, value) for k in known[key]):
                    raise MatrixError(f"--only: {key}={value} matches nothing; {key}s: {', '.join(known[key])}")
            elif value not in known[key]:
                raise MatrixError(f"--only: unknown {key} {value!r}; choose one of: {', '.join(known[key])}")
    chosen = []
    for cell in matrix.cells:
        facets = {
            "cell": cell.name,
            "target": cell.target,
            "compiler": cell.compiler,
            "build": cell.build_type.name,
            "toolchain": cell.toolchain_name,
        }
        if "target" in conditions and _matches(cell.arch, conditions["target"]):
            facets["target"] = cell.arch  # `target=aarch64` means the arch's triple
        if not all(_matches(facets[k], v) for k, v in conditions.items() if k != "cpu"):
            continue
        if "cpu" in conditions:
            cpus = [cpu for cpu in cell.cpus if _matches(cpu, conditions["cpu"])]
            if cpus:
                chosen.append(cell.with_cpus(cpus))
        else:
            chosen.append(cell)
    if not chosen:
        what = " ".join(exprs)
        raise MatrixError(f"--only {what!r} selects no cell; cells: {', '.join(matrix.names)}")
    return chosen


def unavailable(cell: Cell) -> str | None:
    """Why this machine cannot run the cell (toolchain, QEMU, sanitizer runtime), or None."""
    tc = cell.toolchain
    if tc is None:
        return None if shutil.which("cc") else f"no native C compiler (cc); run {INSTALL_SCRIPT}"
    found = probe(tc)
    if not found.usable:
        return "; ".join(found.reasons)
    for lib in cell.build_type.runtime_for(cell.compiler):
        try:
            path = process.run([*tc.c, f"-print-file-name={lib}"], check=False, timeout=30).stdout.strip()
        except IsaforgeError:
            path = ""
        # An absolute path that resolves (the dev symlink points at the runtime in the sysroot) or nothing.
        if not path or not Path(path).is_absolute() or not Path(path).is_file():
            return f"{tc.c[0]} finds no {lib} for {tc.triple} (it comes with the cross GCC); run {INSTALL_SCRIPT}"
    return None
