"""Shared helpers: the isaforge pytest plugin (opted in by pyproject.toml's addopts) provides builds, QEMU runs and
target parametrization."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from isaforge.coverage import SVL_SWEEP
from isaforge.pytest_plugin import QemuRunner, TargetCpu

ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked svl_sweep run their SME kernels at each streaming vector length (parameter `svl`): GCC's builds
    run the shortest only, since their SME kernels are the same words as LLVM's (the .inst route encodes what LLVM's
    assembler does: tests/kernels/test_sme_words.py proves it of every kernel), so the other lengths would run the
    same code again. The driver around them, GCC's own code, is in every such run."""
    dropped = [item for item in items if _gcc_beyond_the_shortest_svl(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in set(dropped)]


def _gcc_beyond_the_shortest_svl(item: pytest.Item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    tc, svl = params.get("target_cpu"), params.get("svl")
    marked = item.get_closest_marker("svl_sweep") is not None
    return marked and isinstance(tc, TargetCpu) and tc.build.name.endswith("-gcc") and svl != min(SVL_SWEEP)


def meson_test_names() -> list[str]:
    """The self-checking C programs tests/kernels/meson.build registers (its `foreach name : [...]`), then `info`:
    what `meson test` on libisaforge's build must report as run and passed."""
    text = (ROOT / "tests/kernels/meson.build").read_text()
    listed = re.search(r"^foreach name : \[(.*?)\]", text, re.MULTILINE)
    assert listed, "tests/kernels/meson.build lists its test programs in one foreach"
    return [*re.findall(r"'(\w+)'", listed[1]), "info"]


@pytest.fixture
def info(qemu_run: QemuRunner):
    """info(target_cpu, **env) → isaforge-info's JSON under that CPU model."""

    def run(tc: TargetCpu, **env: str) -> dict:
        result = qemu_run(tc.build, tc.cpu, "isaforge-info", env=env)
        assert result.returncode == 0, result.describe()
        return json.loads(result.stdout)

    return run


def assert_one_line_error(proc, *words: str) -> None:
    """The CLI's contract for bad input: exit 2, one `isaforge: error:` line naming what is wrong, no traceback."""
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("isaforge: error: ")
    for word in words:
        assert word in lines[0], lines[0]
