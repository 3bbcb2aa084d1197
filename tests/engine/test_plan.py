"""engine/plan.py: which kernels a build of one arch and compiler makes, what it drops, and their order."""

from __future__ import annotations

import json

from tests.engine.engines import GOOD, make_engine, make_vendored_engine, one_line_error, run


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


def test_a_declared_kernel_for_aarch64_stays_out_of_an_arm_build(tmp_path):
    toml = make_vendored_engine(tmp_path / "e")
    proc = run(toml, tmp_path / "out", "arm-linux-gnueabihf-gcc")
    assert proc.returncode == 0, proc.stderr
    assert "vlib" not in proc.stdout and "fp16_dotprod" not in proc.stdout


def test_a_build_for_an_arch_the_engine_does_not_declare(tmp_path):
    toml = make_vendored_engine(tmp_path / "e")
    toml.write_text(toml.read_text().replace('name = "eng"', 'name = "eng"\narches = ["aarch64"]'))
    assert run(toml, tmp_path / "ok").returncode == 0
    one_line_error(run(toml, tmp_path / "out", "arm-linux-gnueabihf-gcc"), "this build is for arm", "arches")
