"""engine/checks.py: what an engine's kernels must satisfy together."""

from __future__ import annotations

import pytest

from tests.engine.engines import GOOD, INTERFACE_KERNELS, make_interface_engine, one_line_error, refuses_engine, run


@pytest.mark.parametrize(
    ("kernels", "extra", "engine_extra", "needles"),
    [
        pytest.param(GOOD[1:], "", "", ["op dot_s8 has no reference", "dot_s8_1x1_ref.c"], id="no-reference"),
        pytest.param(
            [*GOOD, "aarch64/neon/dot_s8_1x32_neon"], "", "", ["2 dot_s8 kernels", "[prefer] neon"], id="unordered"
        ),
    ],
)
def test_a_missing_reference_or_order_is_one_line_and_writes_nothing(tmp_path, kernels, extra, engine_extra, needles):
    refuses_engine(tmp_path, kernels, extra, engine_extra, needles)


def test_twins_tuned_for_one_core_compete_only_within_a_role(tmp_path):
    tuned = INTERFACE_KERNELS.replace('roles = ["gemv"]', 'roles = ["gemv"]\ntuned_for = ["cortex-a55"]')
    apart = tuned.replace('roles = ["gemm"]', 'roles = ["gemm"]\ntuned_for = ["cortex-a55"]')
    assert run(make_interface_engine(tmp_path / "apart", apart), tmp_path / "out-apart").returncode == 0
    rival = apart.replace('roles = ["gemm"]', 'roles = ["gemv"]')
    proc = run(make_interface_engine(tmp_path / "rival", rival), tmp_path / "out")
    one_line_error(proc, "vlib_gemv_neon and vlib_gemm_neon are both mm_f32 kernels of neon tuned for cortex-a55")
