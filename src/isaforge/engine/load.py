"""Reading an engine.toml: the [engine] table and the whole Engine, from the ops (ops.py) and the declared kernels
(declared.py)."""

from __future__ import annotations

from pathlib import Path

from isaforge.catalogue import Catalogue
from isaforge.engine.declared import declared_kernels_of
from isaforge.engine.model import IDENTIFIER, Engine, EngineError
from isaforge.engine.ops import read_ops
from isaforge.engine.sources import include_dirs, source_files
from isaforge.engine.toml_fields import (
    known_arch,
    known_variant,
    nonempty_string,
    read_toml,
    string_list,
    subtable,
    unknown_keys,
)

TOP_KEYS = {"engine", "signature", "op", "prefer", "kernel"}
ENGINE_KEYS = {"name", "variants", "kernels", "includes", "arches", "shared_sources", "include_dirs"}


def load_engine(path: Path, cat: Catalogue, prefix: str | None = None) -> Engine:
    raw = read_toml(path)
    unknown_keys("the file", raw, TOP_KEYS, path)
    engine = subtable(raw, "engine", path)
    unknown_keys("[engine]", engine, ENGINE_KEYS, path)
    name = prefix or nonempty_string(engine, "name", "[engine]", path)
    if not IDENTIFIER.match(name):
        raise EngineError(f"{path}: engine name {name!r} must be lower-case letters and digits (it prefixes C names)")
    variants = engine.get("variants")
    if variants is not None:
        variants = tuple(known_variant(cat, v, path) for v in variants)
    arches = None
    if "arches" in engine:
        listed = string_list(engine, "arches", "[engine]", path)
        arches = tuple(known_arch(cat, a, "[engine] arches", path) for a in listed)
    ops = read_ops(raw, path)
    prefer = {v: tuple(names) for v, names in subtable(raw, "prefer", path).items()}
    for v in prefer:
        known_variant(cat, v, path)
    shared = source_files(engine, "[engine]", path, key="shared_sources", required=False)
    declared = declared_kernels_of(cat, raw, ops, shared, path)
    includes = tuple(engine.get("includes", ()))
    root = (path.parent / engine.get("kernels", "kernels")).resolve()
    dirs = include_dirs(engine, path)
    return Engine(path.resolve(), name, variants, root, includes, ops, prefer, arches, declared, shared, dirs)
