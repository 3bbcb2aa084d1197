"""engine/kernels.py: the grammar tree of an engine's kernels, each file's name, folder and variant checked."""

from __future__ import annotations

import pytest

from tests.engine.engines import GOOD, refuses_engine


@pytest.mark.parametrize(
    ("kernels", "extra", "engine_extra", "needles"),
    [
        pytest.param([*GOOD, "aarch64/neon/dot_s8_neon"], "", "", ["dot_s8_neon.c", "rename"], id="grammar"),
        pytest.param([*GOOD, "aarch64/neon/dot_u8_1x4_neon"], "", "", ["unknown op 'dot_u8'"], id="unknown-op"),
        pytest.param([*GOOD, "aarch64/avx/dot_s8_1x4_avx"], "", "", ["'avx' is not a variant"], id="unknown-variant"),
        pytest.param([*GOOD, "aarch32/sve/dot_s8_1x4_sve"], "", "", ["does not exist on arm"], id="sve-on-arm"),
        pytest.param(GOOD, "", 'variants = ["neon"]', ["dotprod is not in [engine] variants"], id="variant-left-out"),
    ],
)
def test_a_bad_kernel_file_is_one_line_and_writes_nothing(tmp_path, kernels, extra, engine_extra, needles):
    refuses_engine(tmp_path, kernels, extra, engine_extra, needles)
