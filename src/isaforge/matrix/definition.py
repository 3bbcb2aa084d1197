"""ci/matrix.toml as data: build types and cells (target × compiler × build type, with the QEMU CPU models each
runs its tests on), parsed and validated against the catalogue. A mistake is a one-line MatrixError naming the valid
values."""

from __future__ import annotations

import dataclasses
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from isaforge import builds
from isaforge.catalogue import HOST_ARCH, Catalogue, load
from isaforge.errors import IsaforgeError
from isaforge.source_tree import repo_root
from isaforge.toolchains.model import Toolchain, toolchain

MATRIX_FILE = PurePosixPath("ci/matrix.toml")
RESULTS_DIR = PurePosixPath("build/matrix")  # a run writes build/matrix/<cell>/{junit.xml,pytest.log}
SCHEMA = 1


class MatrixError(IsaforgeError):
    """ci/matrix.toml, or a selection from it, is wrong; one line naming the valid values."""


@dataclass(frozen=True)
class BuildType:
    """Meson options and per-compiler flags of one build type; `tag` suffixes the build directory."""

    name: str
    tag: str
    meson: tuple[tuple[str, str], ...] = ()
    c_args: tuple[tuple[str, tuple[str, ...]], ...] = ()
    c_link_args: tuple[tuple[str, tuple[str, ...]], ...] = ()
    runtime: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def _for(self, table: tuple[tuple[str, tuple[str, ...]], ...], compiler: str) -> tuple[str, ...]:
        return dict(table).get(compiler, ())

    def c_args_for(self, compiler: str) -> tuple[str, ...]:
        return self._for(self.c_args, compiler)

    def c_link_args_for(self, compiler: str) -> tuple[str, ...]:
        return self._for(self.c_link_args, compiler)

    def runtime_for(self, compiler: str) -> tuple[str, ...]:
        return self._for(self.runtime, compiler)


@dataclass(frozen=True)
class Cell:
    """One target × compiler × build type, and the CPU models (none for the host) its tests run on."""

    target: str
    compiler: str
    build_type: BuildType
    cpus: tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.target}-{self.compiler}-{self.build_type.name}"

    @property
    def is_host(self) -> bool:
        return self.target == HOST_ARCH

    @property
    def arch(self) -> str:
        """The catalogue arch name ("host" for the native cell)."""
        return HOST_ARCH if self.is_host else load().arch_by_triple(self.target).name

    @property
    def toolchain_name(self) -> str:
        return f"{self.target}-{self.compiler}"

    @property
    def toolchain(self) -> Toolchain | None:
        return None if self.is_host else toolchain(self.target, self.compiler)

    def meson_options(self) -> dict[str, str]:
        """The -D options of this cell's build directory."""
        bt = self.build_type
        options = dict(bt.meson)
        if bt.c_args_for(self.compiler):
            options["c_args"] = shlex.join(bt.c_args_for(self.compiler))
        if bt.c_link_args_for(self.compiler):
            # -Dc_link_args replaces the cross file's [built-in options] c_link_args: keep the compiler's own first.
            tc = self.toolchain
            own = tc.compiler.link_args if tc is not None else ()
            options["c_link_args"] = shlex.join([*own, *bt.c_link_args_for(self.compiler)])
        return options

    def build(self) -> builds.Build:
        return builds.build_for(self.target, self.compiler, self.meson_options(), self.build_type.tag)

    def with_cpus(self, cpus: Sequence[str]) -> Cell:
        return dataclasses.replace(self, cpus=tuple(cpus))


@dataclass(frozen=True)
class Matrix:
    cells: tuple[Cell, ...]
    build_types: dict[str, BuildType] = field(compare=False)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.cells]

    def cell(self, name: str) -> Cell:
        for c in self.cells:
            if c.name == name:
                return c
        raise MatrixError(f"unknown cell {name!r}; choose one of: {', '.join(self.names)}")


def _check_keys(where: str, table: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in table:
        if key not in allowed:
            raise MatrixError(f"{where}: unknown key {key!r}; allowed: {', '.join(allowed)}")


def _strings(where: str, value: object, *, allow_empty: bool = False) -> tuple[str, ...]:
    """A string or a list of strings, as a tuple."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
        raise MatrixError(f"{where}: expected a name or a list of names, got {value!r}")
    if not items and not allow_empty:
        raise MatrixError(f"{where}: the list is empty")
    return tuple(items)


def _per_compiler(where: str, value: object, cat: Catalogue) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise MatrixError(f"{where}: expected a table of compiler = [flags], got {value!r}")
    for compiler in value:
        if compiler not in cat.compilers:
            raise MatrixError(f"{where}: unknown compiler {compiler!r}; choose one of: {', '.join(cat.compilers)}")
    return tuple((c, _strings(f"{where}.{c}", v, allow_empty=True)) for c, v in value.items())


def _build_type(name: str, raw: object, cat: Catalogue) -> BuildType:
    where = f"{MATRIX_FILE}: build.{name}"
    if not isinstance(raw, dict):
        raise MatrixError(f"{where}: expected a table")
    _check_keys(where, raw, ("tag", "meson", "c_args", "c_link_args", "runtime"))
    tag = raw.get("tag", name)
    if not isinstance(tag, str) or not re.fullmatch(r"[a-z0-9-]*", tag):
        raise MatrixError(f"{where}: tag must be lower-case letters, digits and '-', got {tag!r}")
    meson = raw.get("meson", {})
    if not isinstance(meson, dict) or not all(isinstance(v, str) for v in meson.values()):
        raise MatrixError(f'{where}.meson: expected a table of option = "value" strings')
    if {"c_args", "c_link_args"} & set(meson):
        raise MatrixError(f"{where}.meson: give c_args / c_link_args per compiler, as build.{name}.c_args.<compiler>")
    return BuildType(
        name,
        tag,
        tuple(sorted(meson.items())),
        _per_compiler(f"{where}.c_args", raw.get("c_args", {}), cat),
        _per_compiler(f"{where}.c_link_args", raw.get("c_link_args", {}), cat),
        _per_compiler(f"{where}.runtime", raw.get("runtime", {}), cat),
    )


def _known(where: str, what: str, values: Sequence[str], known: Sequence[str]) -> None:
    for value in values:
        if value not in known:
            raise MatrixError(f"{where}: unknown {what} {value!r}; choose one of: {', '.join(known)}")


def _cpus_of(
    where: str, target: str, raw: Mapping[str, Any], compilers: Sequence[str], cat: Catalogue
) -> tuple[str, ...]:
    """The CPU models of a target's cells: `cpus`, or every model of its arch; none for the host."""
    if target == HOST_ARCH:
        if "cpus" in raw:
            raise MatrixError(f"{where}: the host cell runs natively, without QEMU: it takes no cpus")
        # builds.build_for() builds the host with the machine's cc; only call it what it is.
        if tuple(compilers) != ("gcc",):
            raise MatrixError(f"{where}: the host cell builds with the machine's cc (gcc): compiler must be gcc")
        return ()
    models = tuple(cat.cpus.get(cat.arch_by_triple(target).name, {}))
    cpus = _strings(f"{where}.cpus", raw["cpus"]) if "cpus" in raw else models
    _known(where, f"CPU model for {target}:", cpus, models)
    return cpus


def _cells(
    index: int, raw: object, build_types: dict[str, BuildType], tests: tuple[str, ...], cat: Catalogue
) -> list[Cell]:
    where = f"{MATRIX_FILE}: cell #{index + 1}"
    if not isinstance(raw, dict):
        raise MatrixError(f"{where}: expected a table")
    _check_keys(where, raw, ("target", "compiler", "build", "cpus", "tests"))
    for key in ("target", "compiler", "build"):
        if key not in raw:
            raise MatrixError(f"{where}: missing {key!r}")
    targets = _strings(f"{where}.target", raw["target"])
    _known(where, "target", targets, [*(a.triple for a in cat.arches.values()), HOST_ARCH])
    compilers = _strings(f"{where}.compiler", raw["compiler"])
    _known(where, "compiler", compilers, list(cat.compilers))
    names = _strings(f"{where}.build", raw["build"])
    _known(where, "build", names, list(build_types))
    cell_tests = _strings(f"{where}.tests", raw["tests"]) if "tests" in raw else tests
    return [
        Cell(t, c, build_types[b], _cpus_of(where, t, raw, compilers, cat), cell_tests)
        for t in targets
        for c in compilers
        for b in names
    ]


def parse(text: str, cat: Catalogue | None = None) -> Matrix:
    """The matrix of a ci/matrix.toml text, validated against the catalogue; MatrixError (one line) if wrong."""
    cat = cat or load()
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MatrixError(f"{MATRIX_FILE}: not valid TOML: {exc}") from None
    _check_keys(str(MATRIX_FILE), raw, ("schema", "tests", "build", "cell"))
    if raw.get("schema") != SCHEMA:
        raise MatrixError(f"{MATRIX_FILE}: schema must be {SCHEMA}, got {raw.get('schema')!r}")
    tests = _strings(f"{MATRIX_FILE}: tests", raw.get("tests", []))
    build_raw = raw.get("build", {})
    if not isinstance(build_raw, dict) or not build_raw:
        raise MatrixError(f"{MATRIX_FILE}: no [build.<name>] table")
    build_types = {name: _build_type(name, spec, cat) for name, spec in build_raw.items()}
    cell_raw = raw.get("cell", [])
    if not isinstance(cell_raw, list) or not cell_raw:
        raise MatrixError(f"{MATRIX_FILE}: no [[cell]] entry")
    cells = [c for i, spec in enumerate(cell_raw) for c in _cells(i, spec, build_types, tests, cat)]
    seen: set[str] = set()
    for c in cells:
        if c.name in seen:
            raise MatrixError(f"{MATRIX_FILE}: cell {c.name} is defined twice")
        seen.add(c.name)
    dirs: dict[str, str] = {}
    for c in cells:
        d = c.build().name
        if d in dirs:
            raise MatrixError(f"{MATRIX_FILE}: cells {dirs[d]} and {c.name} share build/{d}: give their builds tags")
        dirs[d] = c.name
    return Matrix(tuple(cells), build_types)


def load_matrix(root: Path | None = None) -> Matrix:
    path = (root or repo_root()) / MATRIX_FILE
    if not path.is_file():
        raise MatrixError(f"{MATRIX_FILE} not found in {path.parent.parent}")
    return parse(path.read_text())
