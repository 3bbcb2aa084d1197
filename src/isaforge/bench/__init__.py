"""`isaforge bench`: how close the micro-kernels come to the machine, by two measures that need no Arm hardware.

- `mca`: the modeled efficiency of every kernel's hot loop on Arm cores, from LLVM's scheduling models
  (llvm-mca-19), as MACs per cycle and as a share of the core's peak for the kernel's MAC instruction, the peak
  itself measured by llvm-mca on a stream of independent MAC instructions.
- `qemu_count`: the guest instructions one GEMM executes inside libisaforge, counted from QEMU's translation and
  execution logs, per MAC: what the packing and driver cost on top of the hot loops.
- `report`: the goals, the markdown tables, JSON and the plot.
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
