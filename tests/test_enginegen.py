"""enginegen.py: the command line, run by path as an engine's build runs it, and as an install carries it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

from isaforge.codegen import GENERATOR_FILES
from tests.engine.engines import GCC64, GOOD, SCRIPT, make_engine, one_line_error, run


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


def test_missing_catalogue_and_compiler(tmp_path):
    one_line_error(run(tmp_path / "nope.toml", tmp_path / "out"), "nope.toml", "no such file")
    toml = make_engine(tmp_path / "e", GOOD)
    one_line_error(run(toml, tmp_path / "out", "no-such-cc"), "cannot run the compiler no-such-cc")


def test_the_generator_leaves_its_installed_tree_as_it_was(tmp_path):
    """An installed prefix or a Conan package must not gain a __pycache__ when an engine's build runs the generator
    (whatever PYTHONDONTWRITEBYTECODE says in the user's shell)."""
    installed = tmp_path / "share" / "isaforge" / "python" / "isaforge"
    installed.mkdir(parents=True)
    for name in GENERATOR_FILES:
        (installed / name).parent.mkdir(exist_ok=True)
        (installed / name).write_bytes((SCRIPT.parent / name).read_bytes())
    toml = make_engine(tmp_path / "engine", GOOD)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, str(installed / "enginegen.py"), str(toml), "-o", str(tmp_path / "out"), "--cc", *GCC64]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    folders = {str(PurePosixPath(name).parent) for name in GENERATOR_FILES} - {"."}
    assert sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*")) == sorted(
        {*GENERATOR_FILES, *folders}
    )
