"""Exported plans (isf_gemm_export / isf_gemm_import) in another process: exported under one CPU model, imported
under the same or another, the imported plan gives C byte-identical to the exporter's (W[n][k], bias, clamp), or is
refused with ISF_ERR_UNSUPPORTED exactly when the importing model cannot run the exporting kernel's variant."""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge.catalogue import load, parse_kernel_name
from isaforge.coverage import sme_model
from isaforge.pytest_plugin import QemuRunner, TargetCpu

PROGRAM = "tests/kernels/test_plan_file"
# binary16 (its bias converted for fp32-accumulating kernels, its bounds rounded) and int32 (bias, no clamp): the
# fp32-output ops share gemm_f16's path through the export.
OPS = {"gemm_f16": 1, "gemm_s8": 3}
PLAIN = {"aarch64": "cortex-a53", "arm": "cortex-a7"}


def exported(qemu_run: QemuRunner, tc: TargetCpu, cpu: str, path: Path, op: str) -> str:
    result = qemu_run(tc.build, cpu, PROGRAM, ["export", str(path), str(OPS[op])])
    assert result.returncode == 0, result.describe()
    return result.stdout.split()[-1]


def imported(qemu_run: QemuRunner, tc: TargetCpu, cpu: str, path: Path, op: str) -> str:
    result = qemu_run(tc.build, cpu, PROGRAM, ["import", str(path), str(OPS[op])])
    assert result.returncode == 0, result.describe()
    return result.stdout.strip()


def runs_on(arch: str, kernel: str, cpu: str) -> bool:
    cat = load()
    k = parse_kernel_name(kernel, cat.ops)
    return cat.variant_features(arch, k.variant) <= set(cat.cpu_features(arch, cpu))


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_an_exported_plan_gives_the_same_c_in_another_process(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path, op: str
) -> None:
    arch = target_cpu.build.arch_name
    plain = PLAIN[arch]
    for source, reader in ((plain, "max"), ("max", plain)):
        path = tmp_path / f"{op}-{source}-{reader}.plan"
        kernel = exported(qemu_run, target_cpu, source, path, op)
        want = "same C" if runs_on(arch, kernel, reader) else "unsupported"
        assert imported(qemu_run, target_cpu, reader, path, op) == want, f"{kernel} from {source} on {reader}"


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_a_plan_exported_at_one_svl_is_refused_at_another(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path, op: str
) -> None:
    """An SME kernel's plan holds panels MR × NR for the SVL it was made at (its header says which): imported on a
    thread of the same SVL it gives the same C, whatever the SVE length; at another SVL it is refused."""
    path = tmp_path / f"{op}.plan"
    kernel = exported(qemu_run, target_cpu, sme_model(32, 16), path, op)
    assert load().variant(parse_kernel_name(kernel, load().ops).variant).scalable == "streaming", kernel
    assert imported(qemu_run, target_cpu, sme_model(32, 64), path, op) == "same C"
    assert imported(qemu_run, target_cpu, sme_model(64, 16), path, op) == "unsupported"
    assert imported(qemu_run, target_cpu, sme_model(16, 32), path, op) == "unsupported"
