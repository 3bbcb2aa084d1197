"""engine/ops.py: an engine's signatures and ops, with their roles' rules, checked as they are read."""

from __future__ import annotations

import pytest

from tests.engine.engines import GOOD, make_interface_engine, one_line_error, refuses_engine, run


@pytest.mark.parametrize(
    ("kernels", "extra", "engine_extra", "needles"),
    [
        pytest.param(GOOD, "\n[op.gemm_s8]\nsignature = 'gemm'\ndoc = 'x'\n", "", ["signature 'gemm'"], id="no-sig"),
    ],
)
def test_an_op_of_no_declared_signature_is_one_line_and_writes_nothing(tmp_path, kernels, extra, engine_extra, needles):
    refuses_engine(tmp_path, kernels, extra, engine_extra, needles)


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        pytest.param(
            ('when = "m == 1"', 'when = "rows == 1"'),
            ["'rows' is not an integer parameter", "m, n, k"],
            id="unknown-parameter",
        ),
        pytest.param(('when = "m == 1"', 'when = "a == 1"'), ["'a' is not an integer parameter"], id="pointer"),
        pytest.param(('when = "m == 1"', 'when = "m === 1"'), ["is not <param>"], id="rule-syntax"),
        pytest.param(
            ('{ name = "gemm" }', '{ name = "gemm", when = "m > 1" }'), ["the last role serves"], id="last-rule"
        ),
    ],
)
def test_a_bad_role_rule_is_one_line(tmp_path, change, needles):
    toml = make_interface_engine(tmp_path / "e")
    assert change[0] in toml.read_text()
    toml.write_text(toml.read_text().replace(*change))
    one_line_error(run(toml, tmp_path / "out"), *needles)
