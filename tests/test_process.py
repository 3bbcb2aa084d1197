"""process.run / process.stream: a failure is one line naming the command, how it ended and the kept log."""

from __future__ import annotations

import sys

import pytest

from isaforge import process
from isaforge.errors import IsaforgeError

PY = sys.executable


def test_output_comes_back_and_a_checked_failure_names_its_log(tmp_path) -> None:
    done = process.run([PY, "-c", "print('hello')"])
    assert (done.returncode, done.stdout) == (0, "hello\n")
    log = tmp_path / "logs" / "x.log"
    code = "import sys; print('lots of output'); print('the real reason', file=sys.stderr); sys.exit(3)"
    with pytest.raises(IsaforgeError) as err:
        process.run([PY, "-c", code], what="the step", log=log)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("the step failed (") and "exit status 3: the real reason" in message
    assert message.endswith(f"full output in {log}")
    assert "lots of output" in log.read_text() and "the real reason" in log.read_text()


def test_unchecked_runs_return_the_status_and_keep_no_log(tmp_path) -> None:
    done = process.run([PY, "-c", "raise SystemExit(5)"], check=False, log=tmp_path / "x.log")
    assert done.returncode == 5 and not (tmp_path / "x.log").exists()


def test_a_missing_program_or_a_timeout_raises_even_unchecked(tmp_path) -> None:
    with pytest.raises(IsaforgeError, match="no-such-tool-here not found"):
        process.run(["no-such-tool-here"], check=False)
    with pytest.raises(IsaforgeError, match=r"timed out after 0.5 s\); full output in .*slow.log"):
        process.run([PY, "-c", "import time; time.sleep(5)"], check=False, timeout=0.5, log=tmp_path / "slow.log")


def test_stream_writes_everything_to_the_log_and_returns_the_status(tmp_path) -> None:
    log = tmp_path / "run.log"
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(1)"
    assert process.stream([PY, "-c", code], log) == 1
    text = log.read_text()
    assert text.startswith("$ ") and "out" in text and "err" in text


def test_the_error_quotes_the_first_line_naming_an_error() -> None:
    code = "print('x.c:1: error: no such type'); print('ninja: build stopped'); raise SystemExit(1)"
    with pytest.raises(IsaforgeError, match=r"exit status 1: x\.c:1: error: no such type"):
        process.run([PY, "-c", code])
