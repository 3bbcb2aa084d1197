"""Generated build inputs stay in step with the catalogue, and Meson's script interface answers as Meson expects."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import PurePosixPath

import pytest

from isaforge.catalogue import CatalogueError, load
from isaforge.codegen import (
    GENERATOR_FILES,
    NEWLINE,
    OPS_HEADER,
    configure_answer,
    meson_options,
    render_c,
    render_header,
    render_packers,
)
from tests.conftest import ROOT

CODEGEN = [sys.executable, str(ROOT / "src/isaforge/codegen.py")]


def test_checked_in_meson_options_are_up_to_date() -> None:
    assert (ROOT / "meson.options").read_text() == meson_options(load()), "run `isaforge toolchain write`"


def test_checked_in_ops_header_is_up_to_date() -> None:
    assert (ROOT / OPS_HEADER).read_text() == render_header(load()), "run `isaforge toolchain write`"


def test_ops_header_declares_every_op_feature_and_function_of_the_catalogue() -> None:
    text = render_header(load())
    ops = dict(re.findall(r"^    ISF_OP_(\w+) = (\d+),", text, re.MULTILINE))
    assert {name.lower(): int(i) for name, i in ops.items()} == {o.name: o.index for o in load().ops.values()}
    bits = dict(re.findall(r"ISF_FEATURE_(\w+) = 1u << (\d+)", text))
    assert {name.lower(): int(b) for name, b in bits.items()} == {f.name: f.bit for f in load().features.values()}
    assert re.findall(r"^isf_status (isf_\w+)\(", text, re.MULTILINE) == [f"isf_{op}" for op in load().plain_ops()]
    assert f"#define ISF_OP_COUNT {len(load().ops)}" in text


def test_every_variant_but_ref_has_an_option() -> None:
    text = meson_options(load())
    for v in load().variants:
        assert (f"option('variant_{v}'" in text) == (v != "ref")


def test_c_tables_list_only_the_built_variants_kernels() -> None:
    text = render_c(load(), ROOT, "aarch64", ["ref", "neon"])
    assert "isf_ukernel_gemm_f32_8x12_neon" in text
    assert "_dotprod" not in text and "_i8mm" not in text
    assert f"const size_t isf_feature_count = {len(load().arch_features('aarch64'))};" in text


def test_arm_feature_rows_carry_the_aarch64_cpuinfo_names_too() -> None:
    """A 32-bit process on an arm64 kernel reads AArch64 names in /proc/cpuinfo: each arm row has both vocabularies."""
    text = render_c(load(), ROOT, "arm", ["ref"])
    assert '{"neon", 0x1u, 0x1u, {0x1000ull, 0x0ull}, "neon", "asimd"},' in text
    assert '"asimdbf16", "bf16"},' in text
    aarch64 = render_c(load(), ROOT, "aarch64", ["ref"])
    assert '"svei8mm", ""},' in aarch64  # one vocabulary on aarch64


def test_cpu_part_rows_carry_each_arch_own_features() -> None:
    """The MIDR table per arch: Neoverse-N2 has SVE on aarch64 only, and its 64 KiB L1D on both (Cortex-A55's is the
    implementer's choice: 0); every part is in both arches' tables."""
    cat = load()
    aarch64, arm = (render_c(cat, ROOT, arch, ["ref"]) for arch in ("aarch64", "arm"))
    sve_mask = cat.mask(["sve", "sve2", "svei8mm", "svebf16"])
    n2 = cat.mask(cat.cpu_part("neoverse-n2").features)
    assert f'{{0x41u, 0xd49u, "neoverse-n2", 0x{n2:x}u, 65536u}},' in aarch64
    assert f'{{0x41u, 0xd49u, "neoverse-n2", 0x{n2 & ~sve_mask:x}u, 65536u}},' in arm
    a55 = cat.mask(cat.cpu_part("cortex-a55").features)
    assert f'{{0x41u, 0xd05u, "cortex-a55", 0x{a55:x}u, 0u}},' in aarch64
    for text in (aarch64, arm):
        assert f"const size_t isf_cpu_part_count = {len(cat.cpu_parts)};" in text


def test_host_tables_have_reference_kernels_and_no_features() -> None:
    text = render_c(load(), ROOT, "host", ["ref"])
    assert "const size_t isf_feature_count = 0;" in text
    assert "const size_t isf_cpu_part_count = 0;" in text
    assert "isf_ukernel_gemm_s8_4x4_ref" in text


def test_script_mode_runs_without_the_package_installed(tmp_path) -> None:
    # Meson runs codegen.py from a bare source tree: it must not need isaforge on sys.path.
    env = {"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1"}
    out = subprocess.run(
        [sys.executable, "-S", *CODEGEN[1:], "--arch", "arm", "--compiler", "gcc", "configure"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert lines[0] == "baseline|-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee"
    neon_flags = "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee -DISAFORGE_VARIANT=neon"
    assert lines[1].startswith(f"variant|neon|{neon_flags}|neon|0|")


def test_configure_answer_carries_each_variant_whole() -> None:
    """meson.build reads every variant from one line: sources, the probe (newlines spelled @NL@), the assembler's
    probe instruction and whether the variant has packers."""
    cat = load()
    lines = configure_answer(cat, ROOT, "aarch64", "clang").splitlines()
    variants = {fields[1]: fields for fields in (line.split("|") for line in lines) if fields[0] == "variant"}
    assert list(variants) == [v.name for v in cat.arch_variants("aarch64") if v.name != "ref"]
    i8mm = variants["i8mm"]
    assert len(i8mm) == 9
    assert i8mm[5].split() == [p.relative_to(ROOT).as_posix() for p in cat.kernel_sources(ROOT, "aarch64", "i8mm")]
    assert i8mm[6].replace(NEWLINE, "\n") == cat.variant("i8mm").probe
    assert i8mm[7] == "smmla v0.4s, v1.16b, v2.16b"
    assert variants["neon"][8] == "yes" and variants["sve2"][5:9:3] == ["", "none"]
    rest = {line.split("|")[0]: line.split("|")[1] for line in lines if not line.startswith("variant|")}
    assert rest["cpus"].split() == list(cat.cpus["aarch64"])
    assert "kernels/reference/gemm_f32_4x4_ref.c" in rest["reference"].split()


def test_configure_answer_names_the_generator_files_by_the_folder_they_install_into() -> None:
    """meson.build installs each line into one folder: the generator's own files, then its engine package's."""
    lines = configure_answer(load(), ROOT, "aarch64", "gcc").splitlines()
    answer = {fields[0]: fields[1].split() for fields in (line.split("|") for line in lines)}
    top, engine = answer["generator-files"], answer["generator-engine-files"]
    assert {PurePosixPath(p).parent.as_posix() for p in top} == {"src/isaforge"}
    assert {PurePosixPath(p).parent.as_posix() for p in engine} == {"src/isaforge/engine"}
    assert "src/isaforge/enginegen.py" in top and "src/isaforge/engine/__init__.py" in engine
    assert sorted(p.removeprefix("src/isaforge/") for p in [*top, *engine]) == sorted(GENERATOR_FILES)
    assert all((ROOT / p).is_file() for p in [*top, *engine])


def test_script_mode_error_is_one_line() -> None:
    proc = subprocess.run([*CODEGEN, "--arch", "mips", "configure"], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "unknown arch 'mips'" in proc.stderr


def test_kernel_rows_carry_their_layout_id_name_and_packers() -> None:
    text = render_c(load(), ROOT, "aarch64", ["ref", "neon", "dotprod"])
    row = next(line for line in text.splitlines() if line.startswith('    {"gemm_s8_8x12x4_dotprod"'))
    assert row.endswith('{0xe9619f65u, "s8.8x12x4", isf_pack_a_s8_8x12x4, isf_pack_b_s8_8x12x4}},')
    ref = next(line for line in text.splitlines() if line.startswith('    {"gemm_f32_4x4_ref"'))
    assert ref.endswith('"f32.4x4x1", NULL, NULL}},')  # generic: pack.c's portable loop only
    assert "ISF_PACK_B(s8_8x12x4);" in text


def test_packers_are_instantiated_with_the_layouts_constants() -> None:
    """No tile size lives in pack.c or the families: codegen writes each layout's NR (and, scalable, ×2) in."""
    text = render_packers(load(), ROOT, "aarch64", "neon")
    assert "ISF_PACK_B(s8_8x12x4) {\n    if (w == 12) {\n        b_k4_b8(b, ldb_b, blocks, 12, 12, out);" in text
    assert "if (w == 8 && nr == 8) {" in text and "} else if (w == 16 && nr == 16) {" in text  # f32.8x8x1.vl
    assert "ISF_PACK_A(f16_f32_8x12x1) {\n    a_widen_f16_mr8(a, lda_b, blocks, out);" in text
    assert "ISF_PACK_A(f32_4x4x1)" not in text  # reference layouts are generic
    assert render_packers(load(), ROOT, "aarch64", "dotprod") == ""  # no dotprod families


def test_pack_c_names_no_tile_size() -> None:
    text = (ROOT / "kernels/runtime/pack.c").read_text()
    assert not re.search(r"\b(mr|nr|MR|NR) ?== ?\d", text)
    assert "a_g4_mr8" not in text and "b_k4_b8" not in text


def test_a_packer_family_missing_from_its_header_is_refused(tmp_path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "kernels", tree / "kernels")
    header = tree / "kernels/pack/neon/isf_pack_neon.h"
    header.write_text(header.read_text().replace("ISF_INLINE void b_k4_b8(", "ISF_INLINE void b_k4_b8_gone("))
    with pytest.raises(CatalogueError, match=r"s8.(8|1)x12x4 .*neon:b_k4_b8 is not a family of kernels/pack/neon/"):
        render_packers(load(), tree, "aarch64", "neon")


def test_layouts_answer_refuses_a_packer_of_a_variant_not_built() -> None:
    proc = subprocess.run([*CODEGEN, "--arch", "arm", "layouts", "--variants", "dotprod"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert proc.returncode == 1
    assert re.search(r"gemm_s[48]_(4|1)x8x4_dotprod", proc.stderr) and "variant neon is not built" in proc.stderr
    ok = subprocess.run([*CODEGEN, "--arch", "arm", "layouts", "--variants", "neon,dotprod"], capture_output=True,
                        text=True, check=True).stdout  # fmt: skip
    assert "gemm_s8_4x8x4_dotprod|s8.4x8x4|neon:a_g4_mr4|neon:b_k4_b8" in ok.splitlines()
