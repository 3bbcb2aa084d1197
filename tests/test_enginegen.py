"""enginegen: an engine's catalogue and kernel tree, checked, probed with the real compiler and generated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge import enginegen
from isaforge.codegen import GENERATOR_FILES

SCRIPT = Path(enginegen.__file__)
GCC64 = ["aarch64-linux-gnu-gcc"]

CATALOGUE = """
[engine]
name = "eng"
{engine_extra}

[signature.dot]
returns = "int32_t"
params = "const int8_t *a, const int8_t *b, size_t n"
args = "a, b, n"
doc = "Dot product."

[op.dot_s8]
signature = "dot"
doc = "int8 dot"
{extra}
"""

KERNEL = """#include "eng_dispatch.h"
int32_t eng_{name}(const int8_t *a, const int8_t *b, size_t n) {{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}}
"""


def make_engine(root: Path, kernels: list[str], *, extra: str = "", engine_extra: str = "") -> Path:
    """An engine whose kernels are given as '<folder>/<name>' (e.g. 'aarch64/dotprod/dot_s8_1x16x4_dotprod')."""
    root.mkdir(parents=True, exist_ok=True)
    toml = root / "engine.toml"
    toml.write_text(CATALOGUE.format(extra=extra, engine_extra=engine_extra))
    for k in kernels:
        path = root / "kernels" / f"{k}.c"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(KERNEL.format(name=Path(k).name))
    return toml


def run(toml: Path, out: Path, *cc: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(SCRIPT), str(toml), "-o", str(out), *extra, "--cc", *(cc or GCC64)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def compile_c(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("enginegen: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


GOOD = ["reference/dot_s8_1x1_ref", "aarch64/neon/dot_s8_1x16_neon", "aarch64/dotprod/dot_s8_1x16x4_dotprod"]


def test_generates_libraries_dispatch_and_manifest(tmp_path):
    toml = make_engine(tmp_path / "e", [*GOOD, "aarch32/neon/dot_s8_1x8_neon"])
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("|") for line in proc.stdout.splitlines()]
    by_name = {name: (flags.split(), sources.split()) for name, flags, sources in lines}
    assert list(by_name) == ["eng_aarch64_neon", "eng_aarch64_dotprod", "eng_reference"]
    flags, sources = by_name["eng_aarch64_dotprod"]
    assert flags == ["-march=armv8.2-a+dotprod", "-DISAFORGE_VARIANT=dotprod"]
    assert [Path(s).name for s in sources] == ["dot_s8_1x16x4_dotprod.c"]
    # the aarch32 kernel stays out of an aarch64 build; the references are at the baseline
    assert by_name["eng_reference"][0] == []
    assert [Path(s).name for s in by_name["eng_reference"][1]] == ["dot_s8_1x1_ref.c"]
    manifest = json.loads((out / "isaforge-kernels-eng.json").read_text())
    assert manifest["owner"] == "eng" and manifest["arch"] == "aarch64" and manifest["compiler"] == "gcc"
    assert [k["name"] for k in manifest["kernels"]] == ["dot_s8_1x16x4_dotprod", "dot_s8_1x16_neon", "dot_s8_1x1_ref"]
    assert manifest["kernels"][0]["requires"] == ["dotprod", "neon"]
    header = (out / "eng_dispatch.h").read_text()
    assert "int32_t eng_dot_s8(const int8_t *a, const int8_t *b, size_t n);" in header
    assert "int32_t eng_dot_s8_1x16x4_dotprod(const int8_t *a, const int8_t *b, size_t n);" in header


def test_generated_sources_compile_with_the_kernels(tmp_path):
    """The dispatch and every kernel compile (the header's prototypes hold each definition to the op's signature)."""
    toml = make_engine(tmp_path / "e", GOOD)
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    include = Path(__file__).resolve().parents[1] / "include"
    lines = [*proc.stdout.splitlines(), f"dispatch||{enginegen.DISPATCH_SOURCE}"]
    for name, flags, sources in (line.split("|") for line in lines):
        for source in sources.split():
            obj = tmp_path / f"{name}-{Path(source).stem}.o"
            cmd = [*GCC64, "-std=c11", "-Wall", "-Werror", *flags.split(), "-I", str(out), "-I", str(include)]
            compiled = compile_c([*cmd, "-c", source, "-o", str(obj)])
            assert compiled.returncode == 0, compiled.stderr


def test_a_definition_that_breaks_the_signature_does_not_compile(tmp_path):
    toml = make_engine(tmp_path / "e", GOOD)
    bad = tmp_path / "e/kernels/aarch64/neon/dot_s8_1x16_neon.c"
    bad.write_text(bad.read_text().replace("size_t n", "int n"))
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    include = Path(__file__).resolve().parents[1] / "include"
    compiled = compile_c([*GCC64, "-I", str(out), "-I", str(include), "-c", str(bad), "-o", str(tmp_path / "x.o")])
    assert compiled.returncode != 0 and "conflicting types" in compiled.stderr


@pytest.mark.parametrize(
    ("kernels", "extra", "engine_extra", "needles"),
    [
        pytest.param([*GOOD, "aarch64/neon/dot_s8_neon"], "", "", ["dot_s8_neon.c", "rename"], id="grammar"),
        pytest.param([*GOOD, "aarch64/neon/dot_u8_1x4_neon"], "", "", ["unknown op 'dot_u8'"], id="unknown-op"),
        pytest.param([*GOOD, "aarch64/avx/dot_s8_1x4_avx"], "", "", ["'avx' is not a variant"], id="unknown-variant"),
        pytest.param(GOOD[1:], "", "", ["op dot_s8 has no reference", "dot_s8_1x1_ref.c"], id="no-reference"),
        pytest.param([*GOOD, "aarch32/sve/dot_s8_1x4_sve"], "", "", ["does not exist on arm"], id="sve-on-arm"),
        pytest.param(GOOD, "", 'variants = ["neon"]', ["dotprod is not in [engine] variants"], id="variant-left-out"),
        pytest.param(GOOD, "", 'variants = ["dotprot"]', ["unknown variant 'dotprot'"], id="unknown-listed"),
        pytest.param(
            [*GOOD, "aarch64/neon/dot_s8_1x32_neon"], "", "", ["2 dot_s8 kernels", "[prefer] neon"], id="unordered"
        ),
        pytest.param(GOOD, "\n[op.gemm_s8]\nsignature = 'gemm'\ndoc = 'x'\n", "", ["signature 'gemm'"], id="no-sig"),
        pytest.param(GOOD, "", 'flavour = "x"', ["unknown key 'flavour' in [engine]"], id="unknown-key"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, kernels, extra, engine_extra, needles):
    toml = make_engine(tmp_path / "e", kernels, extra=extra, engine_extra=engine_extra)
    out = tmp_path / "out"
    one_line_error(run(toml, out), *needles)
    assert not out.exists() or not any(out.iterdir())


def test_prefer_orders_kernels_of_one_variant(tmp_path):
    extra = '\n[prefer]\nneon = ["dot_s8_1x32_neon", "dot_s8_1x16_neon"]\n'
    toml = make_engine(tmp_path / "e", [*GOOD, "aarch64/neon/dot_s8_1x32_neon"], extra=extra)
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    names = [k["name"] for k in json.loads((out / "isaforge-kernels-eng.json").read_text())["kernels"]]
    assert names == ["dot_s8_1x16x4_dotprod", "dot_s8_1x32_neon", "dot_s8_1x16_neon", "dot_s8_1x1_ref"]


def test_a_variant_the_compiler_cannot_build(tmp_path):
    """A real compiler that cannot build Arm variants (the machine's own gcc) forced to aarch64: a listed variant is
    an error; an unlisted one is dropped, said on stderr and in the manifest."""
    listed = make_engine(tmp_path / "a", GOOD, engine_extra='variants = ["neon", "dotprod"]')
    one_line_error(
        run(listed, tmp_path / "out-a", "gcc", extra=("--arch", "aarch64")), "variant neon: gcc cannot compile"
    )
    unlisted = make_engine(tmp_path / "b", GOOD)
    proc = run(unlisted, tmp_path / "out-b", "gcc", extra=("--arch", "aarch64"))
    assert proc.returncode == 0, proc.stderr
    assert "variant dotprod dropped" in proc.stderr
    manifest = json.loads((tmp_path / "out-b/isaforge-kernels-eng.json").read_text())
    assert "dotprod" in manifest["dropped"]
    assert [line.split("|")[0] for line in proc.stdout.splitlines()] == ["eng_reference"]


def test_missing_catalogue_and_compiler(tmp_path):
    one_line_error(run(tmp_path / "nope.toml", tmp_path / "out"), "nope.toml", "no such file")
    toml = make_engine(tmp_path / "e", GOOD)
    one_line_error(run(toml, tmp_path / "out", "no-such-cc"), "cannot run the compiler no-such-cc")


def test_one_engine_per_output_directory(tmp_path):
    out = tmp_path / "out"
    assert run(make_engine(tmp_path / "a", GOOD), out).returncode == 0
    other = make_engine(tmp_path / "b", GOOD)
    other.write_text(other.read_text().replace('name = "eng"', 'name = "other"'))
    one_line_error(run(other, out), "already holds the dispatch of engine eng", "its own directory")


def test_regenerating_leaves_unchanged_files_alone(tmp_path):
    toml = make_engine(tmp_path / "e", GOOD)
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert run(toml, out).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


def test_the_generator_leaves_its_installed_tree_as_it_was(tmp_path):
    """An installed prefix or a Conan package must not gain a __pycache__ when an engine's build runs the generator
    (whatever PYTHONDONTWRITEBYTECODE says in the user's shell)."""
    installed = tmp_path / "share" / "isaforge" / "python" / "isaforge"
    installed.mkdir(parents=True)
    for name in GENERATOR_FILES:
        (installed / name).write_bytes((SCRIPT.parent / name).read_bytes())
    toml = make_engine(tmp_path / "engine", GOOD)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, str(installed / "enginegen.py"), str(toml), "-o", str(tmp_path / "out"), "--cc", *GCC64]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in installed.iterdir()) == sorted(GENERATOR_FILES)
