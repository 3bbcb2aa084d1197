"""engine/load.py: an engine.toml's [engine] table, checked as it is read."""

from __future__ import annotations

import pytest

from tests.engine.engines import GOOD, refuses_engine


@pytest.mark.parametrize(
    ("kernels", "extra", "engine_extra", "needles"),
    [
        pytest.param(GOOD, "", 'variants = ["dotprot"]', ["unknown variant 'dotprot'"], id="unknown-listed"),
        pytest.param(GOOD, "", 'flavour = "x"', ["unknown key 'flavour' in [engine]"], id="unknown-key"),
    ],
)
def test_a_bad_engine_table_is_one_line_and_writes_nothing(tmp_path, kernels, extra, engine_extra, needles):
    refuses_engine(tmp_path, kernels, extra, engine_extra, needles)
