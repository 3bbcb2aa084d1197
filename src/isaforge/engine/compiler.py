"""What the engine's C compiler says of itself: the arch it targets and whether it is gcc or clang."""

from __future__ import annotations

import subprocess

from isaforge.catalogue import HOST_ARCH, Catalogue
from isaforge.engine.model import EngineError


def _run(cc: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([*cc, *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise EngineError(
            f"cannot run the compiler {' '.join(cc)} ({exc.strerror}); pass the C compiler after --cc"
        ) from exc


def detect_arch(cat: Catalogue, cc: list[str]) -> str:
    machine = _run(cc, ["-dumpmachine"]).stdout.strip()
    for arch in cat.arches.values():
        if machine == arch.triple or machine.split("-")[0] == arch.triple.split("-")[0]:
            return arch.name
    if machine.startswith("arm"):
        return "arm"
    return HOST_ARCH


def detect_compiler(cc: list[str]) -> str:
    return "clang" if "clang" in _run(cc, ["--version"]).stdout.lower() else "gcc"
