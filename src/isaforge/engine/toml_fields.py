"""Reading the values of an engine.toml: each reader checks one value's type and says, in one line naming the file,
what it should have been."""

from __future__ import annotations

import tomllib
from pathlib import Path

from isaforge.catalogue import Catalogue, CatalogueError
from isaforge.engine.model import EngineError


def unknown_keys(where: str, table: dict, allowed: set[str], path: Path) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise EngineError(f"{path}: unknown key {extra[0]!r} in {where}; the keys are: {', '.join(sorted(allowed))}")


def subtable(raw: dict, key: str, path: Path) -> dict:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise EngineError(f"{path}: [{key}] must be a table")
    return value


def nonempty_string(table: dict, key: str, where: str, path: Path, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise EngineError(f'{path}: {where} needs {key} = "…" (a non-empty string)')
    return value


def string_list(table: dict, key: str, where: str, path: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise EngineError(f'{path}: {where} {key} must be a list of strings, e.g. {key} = ["…"]')
    return tuple(value)


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError as exc:
        raise EngineError(f"{path}: no such file; pass the engine's catalogue (e.g. engine.toml)") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise EngineError(f"{path}: not valid TOML ({exc})") from exc


def known_variant(cat: Catalogue, name: str, path: Path) -> str:
    try:
        cat.variant(name)
    except CatalogueError as exc:
        raise EngineError(f"{path}: {exc}") from exc
    return name


def known_arch(cat: Catalogue, name: str, where: str, path: Path) -> str:
    if name not in cat.arches:
        raise EngineError(f"{path}: {where}: unknown arch {name!r}; isaforge's arches are: {', '.join(cat.arches)}")
    return name


def whole_number(table: dict, key: str, where: str, path: Path) -> int:
    value = table.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise EngineError(f"{path}: {where} {key} must be a whole number (the kernel's tile; 0 when it has none)")
    return value
