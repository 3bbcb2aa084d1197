"""The subcommand registry: every entry is a module with add_arguments/run, and errors are one line."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from isaforge.cli import SUBCOMMANDS


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_every_subcommand_is_a_module_with_the_interface(name: str) -> None:
    module = importlib.import_module(f"isaforge.commands.{SUBCOMMANDS[name]}")
    assert callable(module.add_arguments) and callable(module.run)
    assert module.__doc__, "the docstring is the subcommand's help"


def test_help_lists_every_subcommand() -> None:
    out = subprocess.run([sys.executable, "-m", "isaforge", "--help"], capture_output=True, text=True, check=True)
    for name in SUBCOMMANDS:
        assert name in out.stdout


def test_unknown_subcommand_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "isaforge", "frobnicate"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr
