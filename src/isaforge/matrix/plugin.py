"""The pytest side of the matrix: `pytest -p isaforge.matrix.plugin --matrix-cell NAME` tests that cell's build (its
Meson options and build directory) instead of the default build of each toolchain. The runner loads it in every cell's
pytest run; nothing else does (no entry point)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isaforge.errors import IsaforgeError
from isaforge.matrix.definition import load_matrix

if TYPE_CHECKING:
    import pytest

# The builds it names are tested by the isaforge plugin's fixtures: loading this one loads that one too.
pytest_plugins = ["isaforge.pytest_plugin"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("isaforge").addoption(
        "--matrix-cell", default="", help="test this cell of ci/matrix.toml's build (its Meson options, build dir)"
    )


def pytest_configure(config: pytest.Config) -> None:
    import pytest  # noqa: PLC0415 - only a pytest run needs it

    from isaforge.pytest_plugin import BUILDS_UNDER_TEST  # noqa: PLC0415 - likewise

    name = config.getoption("--matrix-cell")
    if not name:
        return
    try:
        cell = load_matrix().cell(name)
    except IsaforgeError as exc:
        raise pytest.UsageError(f"--matrix-cell: {exc}") from None
    # The isaforge plugin parametrizes over the builds it finds here: this cell's build only.
    config.stash[BUILDS_UNDER_TEST] = [] if cell.is_host else [cell.build()]
