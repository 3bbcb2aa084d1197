"""The CI matrix of ci/matrix.toml: cells of target × compiler × build type, each with the QEMU CPU models its tests
run on. Parsing and validation against the catalogue, cell selection (`--only`), the local runner (build, pytest with
JUnit XML, a live progress line, a closing summary per cell × CPU model) and the GitHub workflow made from it.

It is also a pytest plugin, loaded by the runner as `-p isaforge.matrix --matrix-cell NAME`: the isaforge plugin
then tests that cell's build (its Meson options and build directory) instead of the default build of each toolchain.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, TextIO

from isaforge import builds
from isaforge.catalogue import HOST_ARCH, Catalogue, load
from isaforge.errors import IsaforgeError
from isaforge.toolchains import INSTALL_SCRIPT, Toolchain, probe, repo_root, toolchain

if TYPE_CHECKING:
    import pytest

MATRIX_FILE = PurePosixPath("ci/matrix.toml")
WORKFLOW_FILE = PurePosixPath(".github/workflows/cross.yml")
RESULTS_DIR = PurePosixPath("build/matrix")
SCHEMA = 1
FILTER_KEYS = ("cell", "target", "compiler", "build", "toolchain", "cpu")
NATIVE = "native"  # the "CPU model" column of a host cell
OTHER = "(other)"  # tests of a cross cell that run on no CPU model (name checks, ...)
BUILD_ROW = "(build)"


class MatrixError(IsaforgeError):
    """ci/matrix.toml, or a selection from it, is wrong; one line naming the valid values."""


# -- the model ------------------------------------------------------------------------------------------------------


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


# -- parsing --------------------------------------------------------------------------------------------------------


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


# -- selection ------------------------------------------------------------------------------------------------------


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


# -- availability ---------------------------------------------------------------------------------------------------


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
            proc = subprocess.run(
                [*tc.c, f"-print-file-name={lib}"], capture_output=True, text=True, timeout=30, check=False
            )
            path = proc.stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            path = ""
        # An absolute path that resolves (the dev symlink points at the runtime in the sysroot) or nothing.
        if not path or not Path(path).is_absolute() or not Path(path).is_file():
            return f"{tc.c[0]} finds no {lib} for {tc.triple} (it comes with the cross GCC); run {INSTALL_SCRIPT}"
    return None


# -- ccache ---------------------------------------------------------------------------------------------------------


def ccache_shims(cells: Sequence[Cell], directory: Path) -> Path | None:
    """A directory of `<compiler> -> ccache` links for the cells' cross compilers (ccache's masquerade mode), or
    None without ccache. Meson only puts ccache in front of compilers it finds itself (the native one); a cross
    file's compiler is called by name, so putting this directory first on PATH sends those calls through ccache.
    CCACHE_DISABLE=1 turns it off, as for any ccache use."""
    ccache = shutil.which("ccache")
    if ccache is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    for name in sorted({tc.c[0] for c in cells if (tc := c.toolchain) is not None}):
        link = directory / name
        if link.is_symlink() and os.readlink(link) == ccache:
            continue
        link.unlink(missing_ok=True)
        link.symlink_to(ccache)
    return directory.resolve()  # ninja runs the compilers from the build directory


@contextmanager
def _path_first(directory: Path | None) -> Iterator[None]:
    if directory is None:
        yield
        return
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{directory}{os.pathsep}{old}"
    try:
        yield
    finally:
        os.environ["PATH"] = old


# -- results --------------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Test outcomes and time of one cell on one CPU model (or the cell's build step)."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0


@dataclass
class CellResult:
    cell: Cell
    status: str  # passed | failed | unavailable | build failed
    detail: str = ""
    build_seconds: float = 0.0
    test_seconds: float = 0.0
    per_cpu: dict[str, Tally] = field(default_factory=dict)
    junit: Path | None = None
    log: Path | None = None

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def cpu_of(test_name: str, cpus: Sequence[str]) -> str | None:
    """The CPU model in a test id such as `test_x[aarch64-linux-gnu-gcc@cortex-a53-gemm_f32]`, or None."""
    params = test_name.partition("[")[2]
    at = params.find("@")
    if at < 0:
        return None
    rest = params[at + 1 :]
    for cpu in sorted(cpus, key=len, reverse=True):
        if rest.startswith(cpu) and rest[len(cpu) : len(cpu) + 1] in ("", "-", "]", ","):
            return cpu
    return None


def tally_junit(path: Path, cell: Cell) -> dict[str, Tally]:
    """Per CPU model (NATIVE for the host, OTHER for tests on no model), from pytest's JUnit XML."""
    every_cpu = [cpu for models in load().cpus.values() for cpu in models]
    out: dict[str, Tally] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        cpu = NATIVE if cell.is_host else cpu_of(case.get("name", ""), every_cpu) or OTHER
        t = out.setdefault(cpu, Tally())
        t.seconds += float(case.get("time", "0") or 0)
        if case.find("failure") is not None or case.find("error") is not None:
            t.failed += 1
        elif case.find("skipped") is not None:
            t.skipped += 1
        else:
            t.passed += 1
    order = [*cell.cpus, NATIVE, OTHER]
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


# -- the live progress line -----------------------------------------------------------------------------------------


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m{secs:02d}s"


class Progress:
    """One status line, rewritten in place on a terminal: cells done, and what each running cell is doing. Without a
    terminal (CI logs) it prints one line per step instead."""

    def __init__(self, total: int, stream: TextIO, live: bool | None = None) -> None:
        self.total = total
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self.running: dict[str, str] = {}
        self.done = 0
        self.failed = 0
        self.lock = threading.Lock()
        self._last = 0.0

    def _line(self) -> str:
        head = f"[{self.done}/{self.total} cells"
        head += f", {self.failed} failed]" if self.failed else "]"
        body = " | ".join(f"{name}: {state}" for name, state in self.running.items())
        width = shutil.get_terminal_size((120, 20)).columns - 1
        line = f"{head} {body}".rstrip()
        return line if len(line) <= width else line[: width - 1] + "…"

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.live and (force or now - self._last > 0.1):
            self.stream.write("\r\033[K" + self._line())
            self.stream.flush()
            self._last = now

    def _print(self, text: str) -> None:
        if self.live:
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def step(self, cell: Cell, state: str) -> None:
        """A new phase of a cell: printed as a line without a terminal."""
        with self.lock:
            self.running[cell.name] = state
            if not self.live:
                self._print(f"{cell.name}: {state}")
            self._draw(force=True)

    def update(self, cell: Cell, state: str) -> None:
        """A refresh within a phase (test counts): only redraws the live line."""
        with self.lock:
            self.running[cell.name] = state
            self._draw()

    def finish(self, result: CellResult) -> None:
        with self.lock:
            self.running.pop(result.cell.name, None)
            self.done += 1
            self.failed += result.status in ("failed", "build failed")
            self._print(f"{result.cell.name}: {describe(result)}")
            self._draw(force=True)

    def close(self) -> None:
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()


def describe(result: CellResult) -> str:
    if result.status == "unavailable":
        return f"unavailable: {result.detail}"
    if result.status == "build failed":
        return f"build failed: {result.detail}"
    total = Tally()
    for t in result.per_cpu.values():
        total.passed += t.passed
        total.failed += t.failed
        total.skipped += t.skipped
    counts = f"{total.passed} passed, {total.failed} failed, {total.skipped} skipped"
    extra = f" ({result.detail})" if result.detail else ""
    took = f"build {_duration(result.build_seconds)}, tests {_duration(result.test_seconds)}"
    return f"{result.status}: {counts}{extra}, {took}"


# -- running a cell -------------------------------------------------------------------------------------------------

_PYTEST_RESULT = re.compile(r" (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*\[\s*(\d+)%\]\s*$")


def cell_pytest_command(cell: Cell, junit: Path) -> list[str]:
    """The pytest run of a cell: its tests, its build (through this plugin), its CPU models, JUnit XML."""
    cmd = [sys.executable, "-m", "pytest", *cell.tests, "-p", "isaforge.matrix", "--matrix-cell", cell.name]
    if cell.cpus:
        cmd += ["--qemu-cpu", ",".join(cell.cpus)]
    return [*cmd, f"--junitxml={junit}", "-o", "junit_suite_name=" + cell.name, "-v", "-p", "no:cacheprovider"]


def _test_env() -> dict[str, str]:
    env = dict(os.environ)
    # UBSan's report names the call chain (GCC cells; clang cells trap without a runtime).
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    env["PYTHONUNBUFFERED"] = "1"  # pytest's lines as they come, for the progress line
    return env


def _stream_pytest(cell: Cell, cmd: list[str], log: Path, progress: Progress, root: Path) -> int:
    """Run the cell's pytest into its log, updating the progress line from its `-v` lines; its exit status."""
    counts = Tally()
    with log.open("w") as out:
        out.write("$ " + shlex.join(cmd) + "\n")
        out.flush()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=root, env=_test_env()
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            m = _PYTEST_RESULT.search(line)
            if m:
                outcome = m[1]
                counts.passed += outcome in ("PASSED", "XFAIL")
                counts.failed += outcome in ("FAILED", "ERROR", "XPASS")
                counts.skipped += outcome == "SKIPPED"
                state = f"testing {m[2]}% ({counts.passed} passed"
                state += f", {counts.failed} failed)" if counts.failed else ")"
                progress.update(cell, state)
        return proc.wait()


def run_cell(cell: Cell, out_dir: Path, progress: Progress, root: Path) -> CellResult:
    reason = unavailable(cell)
    if reason is not None:
        result = CellResult(cell, "unavailable", reason)
        progress.finish(result)
        return result
    cell_dir = out_dir / cell.name
    if cell_dir.exists():
        shutil.rmtree(cell_dir)
    cell_dir.mkdir(parents=True)
    log = cell_dir / "pytest.log"
    junit = cell_dir / "junit.xml"
    progress.step(cell, "building")
    start = time.monotonic()
    try:
        builds.ensure_built(cell.build())
    except IsaforgeError as exc:
        log.write_text(str(exc) + "\n")
        result = CellResult(cell, "build failed", str(exc).splitlines()[0], time.monotonic() - start, log=log)
        progress.finish(result)
        return result
    build_seconds = time.monotonic() - start
    n = len(cell.cpus)
    progress.step(cell, f"testing on {n} CPU model{'s' * (n > 1)}" if n else "testing natively")
    start = time.monotonic()
    returncode = _stream_pytest(cell, cell_pytest_command(cell, junit), log, progress, root)
    test_seconds = time.monotonic() - start
    try:
        per_cpu = tally_junit(junit, cell) if junit.is_file() else {}
    except ET.ParseError:  # pytest killed while writing it
        per_cpu = {}
    detail = ""
    if returncode != 0 and not any(t.failed for t in per_cpu.values()):
        # Collection or usage error, or the plugin's "no test passed": say so from pytest's last words.
        tail = [ln for ln in log.read_text().splitlines() if ln.strip()]
        detail = f"pytest exit {returncode}: {tail[-1].strip('= ') if tail else 'no output'}"
    status = "passed" if returncode == 0 else "failed"
    result = CellResult(cell, status, detail, build_seconds, test_seconds, per_cpu, junit, log)
    progress.finish(result)
    return result


@dataclass
class Run:
    results: list[CellResult]
    seconds: float
    allow_unavailable: bool

    @property
    def ok(self) -> bool:
        ran = [r for r in self.results if r.status != "unavailable"]
        if not ran:
            return False
        return all(r.ok or (r.status == "unavailable" and self.allow_unavailable) for r in self.results)


def run_matrix(
    cells: Sequence[Cell],
    *,
    jobs: int = 1,
    allow_unavailable: bool = False,
    out_dir: Path | None = None,
    stream: TextIO | None = None,
    live: bool | None = None,
    root: Path | None = None,
) -> Run:
    """Build and test every cell (`jobs` at a time), each with JUnit XML under out_dir/<cell>/."""
    if jobs < 1:
        raise MatrixError(f"-j must be at least 1, got {jobs}")
    if not cells:
        raise MatrixError("no cell selected")
    root = root or repo_root()
    out_dir = out_dir or root / RESULTS_DIR
    stream = stream or sys.stdout
    progress = Progress(len(cells), stream, live)
    start = time.monotonic()
    shims = ccache_shims(cells, out_dir / "ccache-bin")
    with _path_first(shims), ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            results = list(pool.map(lambda c: run_cell(c, out_dir, progress, root), cells))
        finally:
            progress.close()
    return Run(results, time.monotonic() - start, allow_unavailable)


# -- the summary ----------------------------------------------------------------------------------------------------


def summary_rows(run: Run) -> list[list[str]]:
    rows = [["cell", "cpu", "result", "passed", "failed", "skipped", "time"]]
    for r in run.results:
        if r.status == "unavailable":
            rows.append([r.cell.name, "-", f"unavailable: {r.detail}", "", "", "", ""])
            continue
        built = "ok" if r.status != "build failed" else f"FAILED: {r.detail}"
        rows.append([r.cell.name, BUILD_ROW, built, "", "", "", _duration(r.build_seconds)])
        for cpu, t in r.per_cpu.items():
            result = "pass" if t.ok else ("FAIL" if t.failed else "skip")
            rows.append(["", cpu, result, str(t.passed), str(t.failed), str(t.skipped), _duration(t.seconds)])
        if r.status == "failed" and r.detail:
            rows.append(["", "-", f"FAIL: {r.detail}", "", "", "", _duration(r.test_seconds)])
    return rows


def render_table(rows: list[list[str]]) -> str:
    """Columns padded to their widest cell, counts and times right-aligned; a long result (an unavailable reason, a
    build error) overflows its row instead of widening the whole table."""
    numeric = {3, 4, 5, 6}
    widths = [max(len(row[i]) for row in rows if not (i == 2 and len(row[i]) > 24)) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def closing_line(run: Run) -> str:
    by = {s: sum(r.status == s for r in run.results) for s in ("passed", "failed", "build failed", "unavailable")}
    failed = by["failed"] + by["build failed"]
    parts = [
        f"{by['passed']} of {len(run.results)} cells passed",
        f"{failed} failed",
        f"{by['unavailable']} unavailable",
    ]
    verdict = "ok" if run.ok else "FAILED"
    if by["unavailable"] == len(run.results):
        note = " (no cell could run here)"
    elif by["unavailable"]:
        note = " (allowed)" if run.allow_unavailable else " (--allow-unavailable to accept)"
    else:
        note = ""
    return f"matrix {verdict}: {', '.join(parts)}{note}; wall time {_duration(run.seconds)}"


# -- the GitHub workflow --------------------------------------------------------------------------------------------

WORKFLOW_HEADER = "# Generated by `isaforge matrix github` from ci/matrix.toml; do not edit (a test keeps it in sync)."
CONTAINER = "debian:bookworm-slim"
CCACHE_DIR = "/ccache"


def _q(text: str) -> str:
    """A YAML scalar in double quotes (a JSON string is one)."""
    return json.dumps(text)


def _install_steps() -> list[str]:
    return [
        "      - uses: actions/checkout@v5",
        "      - name: install toolchains (ci/install-toolchains.sh, as make and ci/Dockerfile do)",
        "        run: bash ci/install-toolchains.sh",
    ]


def _cell_job(cell: Cell) -> list[str]:
    where = f"on {', '.join(cell.cpus)}" if cell.cpus else "natively"
    out = f"{RESULTS_DIR}/{cell.name}"
    return [
        f"  {cell.name}:",
        f"    name: {_q(f'{cell.name} ({where})')}",
        "    runs-on: ubuntu-latest",
        f"    container: {CONTAINER}",
        "    timeout-minutes: 90",
        "    env:",
        f"      CCACHE_DIR: {CCACHE_DIR}",
        "    steps:",
        *_install_steps(),
        "      - uses: actions/cache@v5",
        "        with:",
        f"          path: {CCACHE_DIR}",
        f"          key: ccache-{cell.name}-${{{{ github.sha }}}}",
        f"          restore-keys: ccache-{cell.name}-",
        "      - name: build and test the cell (the local runner, one cell)",
        f"        run: make ci-matrix ONLY={cell.name}",
        "      - name: JUnit XML and pytest log",
        "        if: always()",
        "        uses: actions/upload-artifact@v6",
        "        with:",
        f"          name: {cell.name}",
        f"          path: {out}/",
        "          if-no-files-found: ignore",
    ]


def render_workflow(matrix: Matrix) -> str:
    """.github/workflows/cross.yml: a function of ci/matrix.toml only. One job per cell runs `make ci-matrix
    ONLY=<cell>` (the local runner) after ci/install-toolchains.sh in Debian 12; `suite` runs what `make ci` runs
    besides the cells; `image` builds ci/Dockerfile."""
    lines = [
        WORKFLOW_HEADER,
        "# One job per cell of the matrix, each running the same runner as `make ci` locally (see docs/ci.md).",
        "name: cross",
        "",
        "on:",
        "  push:",
        "    branches: [main]",
        "  pull_request:",
        "  workflow_dispatch:",
        "",
        "permissions:",
        "  contents: read",
        "",
        "concurrency:",
        "  group: cross-${{ github.ref }}",
        "  cancel-in-progress: true",
        "",
        "defaults:",
        "  run:",
        "    shell: bash",
        "",
        "jobs:",
        "  suite:",
        '    name: "lint and the tests outside the cells"',
        "    runs-on: ubuntu-latest",
        f"    container: {CONTAINER}",
        "    timeout-minutes: 60",
        "    steps:",
        *_install_steps(),
        "      - name: lint, then pytest outside tests/kernels (slow tests included)",
        "        run: make ci-suite",
        "",
        "  image:",
        '    name: "docker image (ci/Dockerfile)"',
        "    runs-on: ubuntu-latest",
        "    timeout-minutes: 60",
        "    steps:",
        "      - uses: actions/checkout@v5",
        "      - name: build the image",
        "        run: docker build --file ci/Dockerfile --tag isaforge-ci .",
        "      - name: the toolchains are usable inside it",
        "        run: docker run --rm isaforge-ci sh -c 'qemu-aarch64 --version && ccache -V && test $(id -u) != 0'",
    ]
    for cell in matrix.cells:
        lines += ["", *_cell_job(cell)]
    return "\n".join(lines) + "\n"


def workflow_out_of_date(root: Path | None = None) -> bool:
    root = root or repo_root()
    path = root / WORKFLOW_FILE
    return not path.is_file() or path.read_text() != render_workflow(load_matrix(root))


# -- pytest plugin: `-p isaforge.matrix --matrix-cell NAME` ---------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("isaforge").addoption(
        "--matrix-cell", default="", help="test this cell of ci/matrix.toml's build (its Meson options, build dir)"
    )


def pytest_configure(config: pytest.Config) -> None:
    import pytest  # noqa: PLC0415 - only a pytest run needs it

    from isaforge.pytest_plugin import BUILDS_UNDER_TEST  # noqa: PLC0415 - likewise

    name = config.getoption("--matrix-cell")
    if not name:
        return
    try:
        cell = load_matrix().cell(name)
    except IsaforgeError as exc:
        raise pytest.UsageError(f"--matrix-cell: {exc}") from None
    # The isaforge plugin parametrizes over the builds it finds here: this cell's build only.
    config.stash[BUILDS_UNDER_TEST] = [] if cell.is_host else [cell.build()]
