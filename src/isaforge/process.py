"""The one place isaforge starts other programs. Every failure is a one-line IsaforgeError naming the command, how it
ended and the log file that keeps its whole output, so a long compiler or QEMU error never floods the terminal and is
never lost either.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from isaforge.errors import IsaforgeError

DEFAULT_TIMEOUT = 600.0
ERROR_LINE = re.compile(r"\berror:", re.IGNORECASE)  # gcc's `error:`, gas's `Error:`, meson's `ERROR:`; not -Werror=


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def _log_path(argv: Sequence[str], log: Path | None) -> Path:
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        return log
    fd, name = tempfile.mkstemp(prefix=f"isaforge-{Path(argv[0]).name}-", suffix=".log")
    os.close(fd)
    return Path(name)


def _keep_log(argv: Sequence[str], how: str, stdout: str, stderr: str, log: Path | None) -> Path:
    path = _log_path(argv, log)
    path.write_text(f"$ {shlex.join(argv)}\n# {how}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n")
    return path


def _gist(stderr: str, stdout: str) -> str:
    """The line that says what went wrong: the first naming an error (a compiler's first error is the cause, ninja's
    last words are not), else the last line on stderr, else on stdout."""
    err = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    out = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    errors = [ln for ln in err + out if ERROR_LINE.search(ln)]
    line = next(iter(errors + err[-1:] + out[-1:]), "")
    return f": {line[:200]}" if line else ""


def failure(what: str, argv: Sequence[str], how: str, log: Path) -> IsaforgeError:
    """The one-line error for a command that failed, and where to read all it said."""
    shown = shlex.join(argv) if len(shlex.join(argv)) <= 100 else shlex.join(argv)[:99] + "…"
    return IsaforgeError(f"{what} failed ({shown}: {how}); full output in {log}")


def _as_text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    what: str = "",
    check: bool = True,
    stdin: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    log: Path | None = None,
    capture: bool = True,
) -> Completed:
    """Run a command to completion. With `check`, a non-zero exit raises; without, the caller reads the exit status.
    A command that cannot start or outlives `timeout` raises either way. `capture=False` lets the output through to
    the terminal (long, interactive tools such as Conan) instead of returning it."""
    args = tuple(str(a) for a in argv)
    what = what or Path(args[0]).name
    try:
        proc = subprocess.run(
            args, input=stdin, capture_output=capture, text=True, cwd=cwd, env=env, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise IsaforgeError(f"{what} failed: {args[0]} not found") from None
    except OSError as exc:
        raise IsaforgeError(f"{what} failed: cannot start {args[0]}: {exc.strerror}") from None
    except subprocess.TimeoutExpired as exc:
        how = f"timed out after {timeout:g} s"
        path = _keep_log(args, how, _as_text(exc.stdout), _as_text(exc.stderr), log)
        raise failure(what, args, how, path) from None
    done = Completed(args, proc.returncode, proc.stdout or "", proc.stderr or "")
    if check and proc.returncode != 0:
        how = f"exit status {proc.returncode}{_gist(done.stderr, done.stdout)}"
        raise failure(what, args, how, _keep_log(args, how, done.stdout, done.stderr, log))
    return done


def stream(
    argv: Sequence[str | os.PathLike[str]],
    log: Path,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> int:
    """Run a long command with its output (stdout and stderr interleaved) going straight to `log`, which is kept; its
    exit status, which the caller judges (a test run that fails is a result, not an error)."""
    args = tuple(str(a) for a in argv)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        out.write(f"$ {shlex.join(args)}\n")
        out.flush()
        try:
            return subprocess.run(
                args, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env, timeout=timeout, check=False
            ).returncode
        except OSError as exc:
            raise IsaforgeError(f"{Path(args[0]).name} failed: cannot start {args[0]}: {exc.strerror}") from None
        except subprocess.TimeoutExpired:
            raise failure(Path(args[0]).name, args, f"timed out after {timeout:g} s", log) from None
