"""The subcommand registry and the help a user reads: every entry is a module with add_arguments/run, `--help` gives
one whole line per subcommand and no word about the code, `--version` the installed version, errors are one line."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys

import pytest

from isaforge.cli import SUBCOMMANDS
from tests.conftest import ROOT


def isaforge(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "isaforge", *args], capture_output=True, text=True, env=env, check=False
    )


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_every_subcommand_is_a_module_with_the_interface(name: str) -> None:
    module = importlib.import_module(f"isaforge.commands.{SUBCOMMANDS[name].module}")
    assert callable(module.add_arguments) and callable(module.run)
    assert module.__doc__, "the docstring is the subcommand's help"


def test_help_gives_each_subcommand_one_whole_line_in_80_columns() -> None:
    out = isaforge("--help").stdout
    for name, (_, summary) in SUBCOMMANDS.items():
        assert re.search(rf"^ +{re.escape(name)} +{re.escape(summary)}$", out, re.M), f"{name}:\n{out}"


def test_help_speaks_to_users_not_to_developers() -> None:
    out = isaforge("--help").stdout
    assert out.startswith("usage: isaforge")
    for word in ("SUBCOMMANDS", "isaforge.commands", "module", "registered"):
        assert word not in out


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_each_subcommand_help_keeps_its_paragraphs(name: str) -> None:
    proc = isaforge(name, "--help")
    assert proc.returncode == 0, proc.stderr
    doc = importlib.import_module(f"isaforge.commands.{SUBCOMMANDS[name].module}").__doc__ or ""
    for paragraph in re.split(r"\n\s*\n", doc.strip()):
        opening = " ".join(paragraph.split()[:3])
        assert f"\n\n{opening}" in proc.stdout, f"{opening!r} does not open a paragraph:\n{proc.stdout}"


def test_version_is_the_one_in_VERSION() -> None:
    proc = isaforge("--version")
    assert proc.returncode == 0 and proc.stdout == f"isaforge {(ROOT / 'VERSION').read_text().strip()}\n"


def test_unknown_subcommand_is_a_usage_error() -> None:
    proc = isaforge("frobnicate")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def test_help_and_version_load_no_subcommand_module() -> None:
    probe = (
        "import sys\nfrom isaforge import cli\n"
        "for argv in (['--help'], ['--version']):\n"
        "    try: cli.main(argv)\n    except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('isaforge.commands.')), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stderr.strip() == "[]"
