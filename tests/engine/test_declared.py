"""engine/declared.py: [kernel.<name>] tables, kernels where they are, built with their feature sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isaforge.engine.c_dispatch import DISPATCH_CODE
from tests.engine.engines import make_vendored_engine, refuses_declared, refuses_interface, run


def test_a_declared_kernel_is_built_where_it_is_with_its_feature_set(tmp_path):
    toml = make_vendored_engine(tmp_path / "e")
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    by_name = {name: (flags.split(), sources.split()) for name, flags, sources in (line.split("|") for line in
               proc.stdout.splitlines())}  # fmt: skip
    assert list(by_name) == ["eng_aarch64_neon", "eng_aarch64_dotprod", "eng_aarch64_fp16_dotprod", "eng_reference"]
    flags, sources = by_name["eng_aarch64_fp16_dotprod"]
    assert flags == ["-march=armv8.2-a+dotprod+fp16", "-DISAFORGE_VARIANT=fp16+dotprod"]
    assert [Path(s).relative_to(tmp_path / "e").as_posix() for s in sources] == [
        "third_party/vlib/src/dot/vlib_dot_i8_fp16dot.c",
        "third_party/vlib/src/dot/vlib_dot_tail.S",
    ]
    manifest = json.loads((out / "isaforge-kernels-eng.json").read_text())
    first = manifest["kernels"][0]  # two features outrank one
    assert first == {
        "name": "vlib_dot_i8_fp16dot", "op": "dot_s8", "variant": "fp16+dotprod",
        "requires": ["dotprod", "fp16", "neon"], "tuned_for": [], "roles": ["any"], "packing": {},
    }  # fmt: skip
    header = (out / "eng_dispatch.h").read_text()
    assert "int32_t vlib_dot_i8_fp16dot(const int8_t *a, const int8_t *b, size_t n);" in header
    assert '{"vlib_dot_i8_fp16dot", "fp16+dotprod", 1, 16, 4, 0, 0x7u, {0},' in (out / DISPATCH_CODE).read_text()


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        pytest.param(
            ("sources = [", 'sources = ["third_party/vlib/nope.c", '),
            ["nope.c does not exist", "relative to"],
            id="missing-source",
        ),
        pytest.param(
            ('symbol = "vlib_dot_i8_fp16dot"', 'symbol = "vlib_dot_s8"'),
            ["symbol vlib_dot_s8 is defined in none of its sources"],
            id="undefined-symbol",
        ),
        pytest.param(('"fp16", "dotprod"', '"fp16", "dotprot"'), ["unknown feature 'dotprot'"], id="unknown-feature"),
        pytest.param(('arch = "aarch64"', 'arch = "arm"\nrequires_x = 1'), ["unknown key 'requires_x'"], id="key"),
        pytest.param(
            ('arch = "aarch64"\nrequires = ["fp16", "dotprod"]', 'arch = ["aarch64", "arm"]\nrequires = ["sve"]'),
            ["[kernel.vlib_dot_i8_fp16dot] requires: sve does not exist on arm"],
            id="feature-not-on-arch",
        ),
        pytest.param(
            (
                "mr = 1",
                'mr = 1\n[kernel.vlib_again]\nop = "dot_s8"\narch = "aarch64"\nrequires = ["dotprod"]\n'
                'sources = ["third_party/vlib/src/dot/vlib_dot_i8_fp16dot.c"]\nsymbol = "vlib_dot_i8_fp16dot"',
            ),
            ["belongs to", "fp16+dotprod", "vlib_again (dotprod)"],
            id="one-file-two-flag-sets",
        ),
        pytest.param(('op = "dot_s8"', 'op = "dot_u8"'), ["op 'dot_u8' is not an [op.*]"], id="unknown-op"),
        pytest.param(
            ("mr = 1", 'mr = 1\ntuned_for = ["cortex-a99"]'),
            ["tuned_for: unknown CPU part 'cortex-a99'"],
            id="unknown-core",
        ),
        pytest.param(
            ("[kernel.vlib_dot_i8_fp16dot]", "[kernel.dot_s8_1x16_neon]"),
            ["two kernels named dot_s8_1x16_neon on aarch64"],
            id="same-name",
        ),
    ],
)
def test_a_bad_declared_kernel_is_one_line_and_writes_nothing(tmp_path, change, needles):
    refuses_declared(tmp_path, change, needles)


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        pytest.param(
            ("packing = { nr = 4 }\n\n[kernel.vlib_gemm_neon]", "packing = { nr = 8 }\n\n[kernel.vlib_gemm_neon]"),
            ["shares packed operands", "vlib_gemv_neon"],
            id="packing-disagrees",
        ),
        pytest.param(
            (
                'members = { get_nr = "vlib_gemv_neon_nr", pack_b = "vlib_gemv_neon_pack" }',
                'members = { get_nr = "vlib_gemv_neon_nr" }',
            ),
            ["members lacks pack_b"],
            id="member-missing",
        ),
        pytest.param(('roles = ["gemv"]', 'roles = ["gemvv"]'), ["has no role 'gemvv'"], id="unknown-role"),
        pytest.param(
            ('get_nr = "vlib_gemm_neon_nr"', 'get_nr = "vlib_gemm_neon_mr"'),
            ["members.get_nr vlib_gemm_neon_mr is defined in none"],
            id="member-undefined",
        ),
    ],
)
def test_a_bad_interface_kernel_is_one_line_and_writes_nothing(tmp_path, change, needles):
    refuses_interface(tmp_path, change, needles)
