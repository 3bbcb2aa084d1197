"""engine/c_header.py: the engine's API header, holding every kernel to its op's signature."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tests.engine.engines import GCC64, GOOD, compile_c, make_engine, make_interface_engine, run


def test_a_definition_that_breaks_the_signature_does_not_compile(tmp_path):
    toml = make_engine(tmp_path / "e", GOOD)
    bad = tmp_path / "e/kernels/aarch64/neon/dot_s8_1x16_neon.c"
    bad.write_text(bad.read_text().replace("size_t n", "int n"))
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    include = ROOT / "include"
    compiled = compile_c([*GCC64, "-I", str(out), "-I", str(include), "-c", str(bad), "-o", str(tmp_path / "x.o")])
    assert compiled.returncode != 0 and "conflicting types" in compiled.stderr


def test_an_interface_op_declares_its_kernel_struct_roles_and_chooser(tmp_path):
    out = tmp_path / "out"
    proc = run(make_interface_engine(tmp_path / "e"), out)
    assert proc.returncode == 0, proc.stderr
    header = (out / "eng_dispatch.h").read_text()
    assert "typedef enum { ENG_MM_F32_ROLE_GEMV = 0, ENG_MM_F32_ROLE_GEMM = 1 } eng_mm_f32_role;" in header
    assert "    eng_mm_f32_get_nr_fn get_nr;\n    eng_mm_f32_pack_b_fn pack_b;\n    size_t nr; /* packing */" in header
    assert "size_t vlib_gemv_neon_nr(void);" in header
    manifest = json.loads((out / "isaforge-kernels-eng.json").read_text())
    assert [k["name"] for k in manifest["kernels"]] == ["vlib_gemm_neon", "vlib_gemv_neon", "mm_ref"]
    assert [(k["roles"], k["packing"]) for k in manifest["kernels"]] == [
        (["gemm"], {"nr": 4}), (["gemv"], {"nr": 4}), (["gemv", "gemm"], {"nr": 4})
    ]  # fmt: skip
    # which kernels read the same packed weights
    assert manifest["packing_groups"] == {"mm_f32": [["vlib_gemm_neon", "vlib_gemv_neon", "mm_ref"]]}
