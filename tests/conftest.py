"""Shared helpers: the isaforge pytest plugin (entry point) provides builds, QEMU runs and target parametrization."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isaforge.pytest_plugin import QemuRunner, TargetCpu

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def info(qemu_run: QemuRunner):
    """info(target_cpu, **env) → isaforge-info's JSON under that CPU model."""

    def run(tc: TargetCpu, **env: str) -> dict:
        result = qemu_run(tc.build, tc.cpu, "isaforge-info", env=env)
        assert result.returncode == 0, result.describe()
        return json.loads(result.stdout)

    return run
