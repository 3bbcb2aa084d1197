"""The files an engine.toml names: kernel sources and include folders, checked to exist, and the C symbols looked for
in them."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from isaforge.catalogue import KERNEL_SUFFIXES
from isaforge.engine.model import SYMBOL, EngineError
from isaforge.engine.toml_fields import string_list


def include_dirs(engine: dict, path: Path) -> tuple[Path, ...]:
    dirs = tuple((path.parent / d).resolve() for d in string_list(engine, "include_dirs", "[engine]", path))
    for d in dirs:
        if not d.is_dir():
            raise EngineError(
                f"{path}: [engine] include_dirs: {d} is not a folder (paths are relative to {path.parent})"
            )
    return dirs


@cache
def _source_text(src: Path) -> str:
    """A source file read once, however many of its kernels' symbols are looked for in it."""
    return src.read_text(errors="replace")


def defined_symbol(symbol: str, sources: tuple[Path, ...], where: str, path: Path) -> str:
    if not SYMBOL.match(symbol):
        raise EngineError(f"{path}: {where} {symbol!r} is not a C identifier")
    if not any(re.search(rf"\b{symbol}\b", _source_text(src)) for src in sources):
        shown = ", ".join(str(s) for s in sources)
        raise EngineError(f"{path}: {where} {symbol} is defined in none of its sources ({shown}); fix the name")
    return symbol


def source_files(table: dict, where: str, path: Path, key: str = "sources", required: bool = True) -> tuple[Path, ...]:
    names = string_list(table, key, where, path)
    if not names and required:
        raise EngineError(f'{path}: {where} needs {key} = ["…"] (its .c and .S files, relative to {path.name})')
    out = []
    for name in names:
        src = (path.parent / name).resolve()
        if src.suffix not in KERNEL_SUFFIXES:
            raise EngineError(f"{path}: {where} {key}: {name} is not a .c or .S file")
        if not src.is_file():
            raise EngineError(f"{path}: {where} {key}: {name} does not exist (paths are relative to {path.parent})")
        out.append(src)
    return tuple(out)
