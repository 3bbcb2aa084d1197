"""`isaforge inst`, run as the real CLI in a subprocess.

cli.SUBCOMMANDS is extended here with `"inst": "inst"` when it does not have it yet, exactly as the registration
in cli.py does, so these tests run the same argument parsing and error path either way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from isaforge import inst
from tests.conftest import assert_one_line_error

SRC = Path(inst.__file__).resolve().parents[1]
BOOT = "import sys; from isaforge import cli; cli.SUBCOMMANDS.setdefault('inst', 'inst'); sys.exit(cli.main())"

GOOD = "\t.text\n1:\tsdot v0.4s, v1.16b, v2.4b[3] // acc\n\tb 1b\n"
GOOD_ARM = "\t.text\n1:\tvsdot.s8 q0, q1, d2[1] @ acc\n\tb 1b\n"


def isaforge(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(SRC)
    return subprocess.run(
        [sys.executable, "-c", BOOT, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_default_arch_is_aarch64(tmp_path):
    (tmp_path / "k.S").write_text(GOOD)
    proc = isaforge("inst", "k.S", "-o", "out.S", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == proc.stderr == ""
    assert (tmp_path / "out.S").read_text() == (
        "\t.text\n1:\t.inst 0x4fa2e820  // sdot v0.4s, v1.16b, v2.4b[3] // acc\n\tb 1b\n"
    )


def test_arm_to_stdout(tmp_path):
    (tmp_path / "k.S").write_text(GOOD_ARM)
    proc = isaforge("inst", "--arch", "arm", "k.S", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "\t.text\n1:\t.inst 0xfe220d62  @ vsdot.s8 q0, q1, d2[1] @ acc\n\tb 1b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.S"]


def test_malformed_is_one_line_with_file_and_line_and_no_output(tmp_path):
    (tmp_path / "k.S").write_text(GOOD + "\tudot z0.d, z1.h, z16.h[1]\n")
    proc = isaforge("inst", "k.S", "-o", "out.S", cwd=tmp_path)
    assert_one_line_error(proc, "k.S:4: ", "udot", "z0-z15")
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.S"]


def test_arm_source_read_as_aarch64_is_left_alone_but_not_the_reverse(tmp_path):
    (tmp_path / "arm.S").write_text(GOOD_ARM)
    proc = isaforge("inst", "arm.S", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == GOOD_ARM
    (tmp_path / "cond.S").write_text("\tvsdoteq.s8 q0, q1, q2\n")
    assert_one_line_error(isaforge("inst", "--arch", "arm", "cond.S", cwd=tmp_path), "cond.S:1: ", "unconditional")


def test_missing_input_and_unwritable_output(tmp_path):
    assert_one_line_error(isaforge("inst", "nope.S", "-o", "o.S", cwd=tmp_path), "nope.S", "No such file")
    (tmp_path / "k.S").write_text(GOOD)
    assert_one_line_error(isaforge("inst", "k.S", "-o", "no/dir/o.S", cwd=tmp_path), "no/dir/o.S")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.S"]


def test_bad_arch_is_a_usage_error(tmp_path):
    proc = isaforge("inst", "--arch", "x86", "k.S", cwd=tmp_path)
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "Traceback" not in proc.stderr
