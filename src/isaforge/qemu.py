"""Run cross-built programs under QEMU user mode with a chosen CPU model (no binfmt_misc needed)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from isaforge import process
from isaforge.catalogue import Arch, CpuSpec, load
from isaforge.errors import IsaforgeError

DEFAULT_TIMEOUT = 300


@dataclass(frozen=True)
class QemuResult:
    cpu: str
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def signal_name(self) -> str | None:
        """SIGILL and friends: qemu-user re-raises the guest's fatal signal on itself."""
        if self.returncode < 0:
            return signal.Signals(-self.returncode).name
        if self.returncode > 128:
            return signal.Signals(self.returncode - 128).name
        return None

    def describe(self) -> str:
        how = self.signal_name or f"exit {self.returncode}"
        tail = f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
        return f"{' '.join(self.argv)} on {self.cpu}: {how}\n{tail}"


def version(binary: str | Path) -> tuple[int, ...]:
    """A QEMU binary's version (`qemu-aarch64 version 11.1.2 (…)`); () when it does not run or say one."""
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return ()
    found = re.search(r"version (\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(part) for part in found.groups() if part is not None) if found else ()


def sme_binary(arch: Arch) -> Path:
    """The SME2-capable QEMU for `arch` (catalogue [qemu_sme]); a one-line error naming the fix when it is missing or
    older than the catalogue asks."""
    spec = load().qemu_sme
    assert spec is not None
    binary = spec.dir / arch.qemu
    if arch.qemu not in spec.binaries:
        raise IsaforgeError(f"no SME-capable QEMU for {arch.name}: SME exists on aarch64 only")
    found = version(binary)
    if found < spec.min_version:
        wanted = ".".join(map(str, spec.min_version))
        have = f"version {'.'.join(map(str, found))}" if found else "missing"
        raise IsaforgeError(f"{binary}: {have}, SME2 runs need QEMU >= {wanted}; run ci/install-toolchains.sh")
    return binary


def qemu_command(arch: Arch, cpu: str, program: Path, args: Sequence[str] = ()) -> list[str]:
    """The full command line; `cpu` may carry QEMU properties, e.g. `max,sve-default-vector-length=64`, and the
    `qemu-sme:` prefix that runs it under the SME2-capable QEMU (sme_binary), which only the runs that need SME2 use."""
    load().cpu_features(arch.name, cpu)  # unknown model: one-line error naming the valid ones
    spec = CpuSpec.parse(cpu)
    if spec.sme_qemu:
        return [str(sme_binary(arch)), "-L", arch.sysroot, "-cpu", spec.qemu_cpu, str(program), *args]
    if shutil.which(arch.qemu) is None:
        raise IsaforgeError(f"{arch.qemu} not found; install it with ci/install-toolchains.sh (qemu-user >= 10)")
    return [arch.qemu, "-L", arch.sysroot, "-cpu", cpu, str(program), *args]


def run(
    arch: Arch,
    cpu: str,
    program: Path,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> QemuResult:
    """Run `program` under `cpu`; never raises for the guest's own failure (see QemuResult.returncode)."""
    cmd = qemu_command(arch, cpu, program, args)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("QEMU_", "ISAFORGE_"))}
    full_env.update(env or {})
    proc = process.run(cmd, what=f"{program.name} under {cpu}", check=False, env=full_env, timeout=timeout)
    return QemuResult(cpu, tuple(cmd), proc.returncode, proc.stdout, proc.stderr)
