"""`isaforge bench`: how close kernels come to the machine, by measures that need no Arm hardware, in three layers.

- `measure`: how a figure is taken: llvm-mca's model of a hot loop on Arm cores against the peak of its MAC kind
  (measure.mca), the guest instructions a run executes, counted from QEMU's execution log (qemu_log, qemu_count),
  and whole calls priced block by block (wholecall).
- `scenarios`: what is run: libisaforge's GEMMs and plans at chosen shapes, its quantized plans, the side by side
  with the peer libraries, and an engine's kernels (`--project`).
- `report`: what is said, from the results alone: goals, markdown, JSON and plots. How each figure is measured, and
  what it leaves out, is docs/bench.md.

This module: the tools every layer runs, each named with the Debian package that provides it.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from isaforge import process
from isaforge.errors import IsaforgeError

# The tools and the Debian package each comes from: a missing tool is one line naming the package.
TOOL_PACKAGES = {
    "llvm-mca-19": "llvm-19",
    "llvm-mc-19": "llvm-19",
    "llvm-objdump-19": "llvm-19",
    "llvm-nm-19": "llvm-19",
    "llvm-readelf-19": "llvm-19",
    "clang-19": "clang-19",
    "qemu-aarch64": "qemu-user",
}


def require(tool: str) -> str:
    """The tool's path, or a one-line error naming the Debian package that provides it."""
    path = shutil.which(tool)
    if path is None:
        package = TOOL_PACKAGES.get(tool, tool)
        raise IsaforgeError(f"{tool} not found; install the Debian package {package} (apt-get install {package})")
    return path


def run_tool(cmd: Sequence[str], what: str, stdin: str | None = None) -> str:
    """Run a tool that must succeed (a missing one names its package); its stdout."""
    require(cmd[0])
    return process.run(cmd, what=what, stdin=stdin).stdout
