"""Pre-packed B as stored bytes (include/isaforge/isaforge.h): packed into a file by one QEMU process and used by
another, on the same or another CPU model or SVE vector length. tests/kernels/test_packed_file.c does the C side:
C between guard bytes, results exact, refusals with C untouched (its exit status counts failed checks): damaged
header fields (resealed, and unsealed where only the checksum tells), buffers shorter than the panels' end."""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge.catalogue import load
from isaforge.pytest_plugin import QemuRunner, TargetCpu

PROGRAM = "tests/kernels/test_packed_file"
OPS = {"gemm_f32": 0, "gemm_f16": 1, "gemm_bf16": 2, "gemm_s8": 3}
# Per arch: the model whose every kernel is the neon variant's, and models without the layouts `max` packs for s8.
PLAIN = {"aarch64": "cortex-a53", "arm": "cortex-a7"}
WITHOUT_MAX_S8 = {"aarch64": ["cortex-a53", "cortex-a55", "neoverse-n1", "a64fx"], "arm": ["cortex-a7"]}


def pack(qemu_run: QemuRunner, tc: TargetCpu, cpu: str, path: Path, op: str, mask: int | None = None) -> str:
    args = ["pack", str(path), str(OPS[op])] + ([hex(mask)] if mask is not None else [])
    result = qemu_run(tc.build, cpu, PROGRAM, args)
    assert result.returncode == 0 and path.stat().st_size > 64, result.describe()
    return next(line for line in result.stdout.splitlines() if line.startswith("packed for ")).split()[-1]


def use(qemu_run: QemuRunner, tc: TargetCpu, cpu: str, path: Path, op: str, expect: str) -> None:
    result = qemu_run(tc.build, cpu, PROGRAM, ["use", str(path), str(OPS[op]), expect])
    assert result.returncode == 0, f"{op} on {cpu}, expecting {expect}: {result.describe()}"


@pytest.mark.cpus(["max"])
def test_damaged_headers_are_refused_and_a_mapped_file_works(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path
) -> None:
    # Its files go to $TMPDIR, else /tmp under fixed names: a run of another toolchain at the same time (a parallel
    # worker, another checkout's suite) would truncate them under its mapping (SIGBUS).
    result = qemu_run(target_cpu.build, "max", PROGRAM, ["self"], env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.describe()


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_packed_in_one_process_used_in_another(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    path = tmp_path / f"{op}.bin"
    pack(qemu_run, target_cpu, "max", path, op)
    use(qemu_run, target_cpu, "max", path, op, "ok")


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_a_layout_the_reader_has_runs_though_it_selects_another(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op
) -> None:
    """Packed on a NEON-only model; `max` selects other kernels for every op but can run the neon one."""
    path = tmp_path / f"{op}.bin"
    packed_for = pack(qemu_run, target_cpu, PLAIN[target_cpu.build.arch_name], path, op)
    assert packed_for.endswith("_neon"), packed_for
    use(qemu_run, target_cpu, "max", path, op, "ok")


@pytest.mark.cpus(["max"])
def test_a_layout_the_reader_cannot_run_is_unsupported(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path) -> None:
    arch = target_cpu.build.arch_name
    path = tmp_path / "s8.bin"
    packed_for = pack(qemu_run, target_cpu, "max", path, "gemm_s8")
    assert packed_for.endswith(("_i8mm", "_svei8mm")), packed_for
    for cpu in WITHOUT_MAX_S8[arch]:
        use(qemu_run, target_cpu, cpu, path, "gemm_s8", "unsupported")


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
def test_neon_i8mm_weights_need_i8mm_and_not_the_kernel_selected(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path
) -> None:
    """Packed under a cap that selects the NEON smmla kernel: neoverse-v1 (which selects SVE smmla) reads it,
    neoverse-n1 (dotprod, no i8mm) refuses it."""
    cat = load()
    path = tmp_path / "s8.bin"
    mask = cat.mask(cat.variant_features("aarch64", "i8mm"))
    assert pack(qemu_run, target_cpu, "max", path, "gemm_s8", mask) == "gemm_s8_8x8x8_i8mm"
    use(qemu_run, target_cpu, "neoverse-v1", path, "gemm_s8", "ok")
    use(qemu_run, target_cpu, "neoverse-n1", path, "gemm_s8", "unsupported")


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_scalable_weights_need_the_same_vector_length(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op
) -> None:
    """Weights packed by a kernel whose NR follows a vector length are refused at another length of that kind (SVE's,
    or SME's streaming one), and not at another length of the other kind."""
    path = tmp_path / f"{op}.bin"
    packed_for = pack(qemu_run, target_cpu, at_lengths("sve", 32, 32), path, op)
    kind = load().variant(packed_for.rsplit("_", 1)[1]).scalable
    assert kind, packed_for
    own = "sme" if kind == "streaming" else "sve"
    use(qemu_run, target_cpu, at_lengths(own, 32, 32), path, op, "ok")
    use(qemu_run, target_cpu, at_lengths(own, 32, 64), path, op, "ok")  # the other kind's length does not matter
    use(qemu_run, target_cpu, at_lengths(own, 64, 32), path, op, "unsupported")


def at_lengths(own: str, own_bytes: int, other_bytes: int) -> str:
    """`max` with the vector length of `own` ("sve" or "sme") and of the other kind set."""
    other = "sve" if own == "sme" else "sme"
    return f"max,{own}-default-vector-length={own_bytes},{other}-default-vector-length={other_bytes}"
