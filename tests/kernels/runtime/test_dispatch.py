"""Detection, capping and kernel choice of the C runtime, CPU model by CPU model under QEMU."""

from __future__ import annotations

import json

import pytest

from isaforge.catalogue import load
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.conftest import ROOT

OPS = tuple(load().ops)


def expected_kernels(tc: TargetCpu, built: list[str], active: list[str]) -> dict[str, str | None]:
    cat = load()
    return {op: cat.best_kernel(ROOT, tc.build.arch_name, built, set(active), op) for op in OPS}


@pytest.mark.parametrize("source", ["hwcap", "cpuinfo"])
def test_detects_the_models_features(target_cpu: TargetCpu, info, source: str) -> None:
    env = {"ISAFORGE_DETECT": "cpuinfo"} if source == "cpuinfo" else {}
    got = info(target_cpu, **env)
    assert got["arch"] == target_cpu.build.arch_name
    assert got["detect_source"] == source
    assert set(got["detected"]) == set(target_cpu.expected_features)
    assert got["active"] == got["detected"]


# Kc is planned for the least L1D of the cores /proc/cpuinfo lists (QEMU's own for the model), or ISAFORGE_CORE's:
# the catalogue's fixed size, else 32 KiB (QEMU's aarch64 `max` is in no table; its arm `max` is a Cortex-A57).
L1D_ASSUMED = 32 * 1024
L1D_MODELS = {"aarch64": ("neoverse-n1", "cortex-a53", "a64fx", "max"), "arm": ("cortex-a15", "cortex-a7", "max")}


def catalogue_l1d(model: str) -> int:
    parts = [p for p in load().cpu_parts.values() if p.name == model]
    return parts[0].l1d_kib * 1024 if parts and parts[0].l1d_kib else L1D_ASSUMED


@pytest.mark.cpus(["max"])
def test_the_l1d_kc_is_planned_for_is_the_cores(target_cpu: TargetCpu, info) -> None:
    arch = target_cpu.build.arch_name
    got = {model: info(TargetCpu(target_cpu.build, model))["l1d_bytes"] for model in L1D_MODELS[arch]}
    want = {model: catalogue_l1d("cortex-a57" if (arch, model) == ("arm", "max") else model) for model in got}
    assert got == want
    assert 64 * 1024 in got.values() or arch == "arm"  # a core of 64 KiB among them (arm: through ISAFORGE_CORE)
    assert info(target_cpu, ISAFORGE_CORE="neoverse-v1")["l1d_bytes"] == catalogue_l1d("neoverse-v1") == 64 * 1024


# SME under both QEMUs: SME2's HWCAP2 bits are above 31 (a 32-bit read would lose them); SME without SVE
# (qemu-sme:max,sve=off, like Apple M4) keeps SME and loses FA64; sme=off loses every SME feature.
SME_MODELS = ("qemu-sme:max", "qemu-sme:max,sve=off", "qemu-sme:max,sme=off", "max,sme=off")


@pytest.mark.cpus(["max"])
@pytest.mark.arch("aarch64")
@pytest.mark.parametrize("model", SME_MODELS)
@pytest.mark.parametrize("source", ["hwcap", "cpuinfo"])
def test_detects_sme_from_both_sources(target_cpu: TargetCpu, info, model: str, source: str) -> None:
    sme = TargetCpu(target_cpu.build, model)
    got = info(sme, **({"ISAFORGE_DETECT": "cpuinfo"} if source == "cpuinfo" else {}))
    assert got["detect_source"] == source
    assert set(got["detected"]) == set(sme.expected_features)
    has_sme2 = model.startswith("qemu-sme:") and "sme=off" not in model
    assert ("sme2" in got["detected"]) == has_sme2 and ("sme_lutv2" in got["detected"]) == has_sme2
    assert ("sve" in got["detected"]) == ("sve=off" not in model)
    for feature, length in (("sve", got["sve_vector_length"]), ("sme", got["streaming_vector_length"])):
        assert (length > 0 and length % 16 == 0) if feature in got["detected"] else length == 0, (feature, length)


@pytest.mark.cpus(["max"])
@pytest.mark.arch("aarch64")
@pytest.mark.parametrize("svl", [16, 256])  # a prctl read: the ends show it (the kernels run at every SVL)
def test_the_streaming_vector_length_is_the_threads_own(target_cpu: TargetCpu, info, svl: int) -> None:
    """The SVL is read apart from the SVE vector length, each as QEMU sets it."""
    vl = 32 if svl == 16 else 16
    model = f"qemu-sme:max,sme-default-vector-length={svl},sve-default-vector-length={vl}"
    got = info(TargetCpu(target_cpu.build, model))
    assert (got["streaming_vector_length"], got["sve_vector_length"]) == (svl, vl)


def test_chooses_the_best_allowed_kernel(target_cpu: TargetCpu, info) -> None:
    got = info(target_cpu)
    assert got["kernels"] == expected_kernels(target_cpu, list(got["variants"]), got["active"])
    assert got["kernels"]["gemm_f32"] is not None and got["kernels"]["gemm_s8"] is not None


def test_every_buildable_variant_is_built(target_cpu: TargetCpu, info) -> None:
    got = info(target_cpu)
    cat = load()
    arch = target_cpu.build.arch_name
    with_kernels = [v.name for v in cat.arch_variants(arch) if cat.kernel_sources(ROOT, arch, v.name)]
    assert list(got["variants"]) == with_kernels
    for name, required in got["variants"].items():
        assert set(required) == cat.variant_features(arch, name)


@pytest.mark.cpus(["max"])
def test_disable_env_caps_features_and_their_dependents(target_cpu: TargetCpu, info) -> None:
    got = info(target_cpu, ISAFORGE_DISABLE="i8mm,dotprod")
    assert {"i8mm", "dotprod"}.isdisjoint(got["active"])
    assert set(got["detected"]) == set(target_cpu.expected_features)
    assert got["kernels"] == expected_kernels(target_cpu, list(got["variants"]), got["active"])
    assert not got["kernels"]["gemm_s8"].endswith(("_i8mm", "_dotprod"))

    without_neon = info(target_cpu, ISAFORGE_DISABLE="neon")
    assert without_neon["active"] == []  # every other feature implies neon
    assert without_neon["kernels"]["gemm_f32"].endswith("_ref")


@pytest.mark.cpus(["max"])
def test_unknown_disable_names_are_reported_once_and_ignored(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    result = qemu_run(target_cpu.build, target_cpu.cpu, "isaforge-info", env={"ISAFORGE_DISABLE": "avx512,i8mm"})
    assert result.returncode == 0, result.describe()
    lines = [line for line in result.stderr.splitlines() if "avx512" in line]
    assert len(lines) == 1 and "unknown feature" in lines[0]
    assert '"i8mm"' not in result.stdout.split('"active"')[1].split("\n")[0]


def runnable_kernels(tc: TargetCpu, op: str, built: list[str], active: list[str]) -> list[str]:
    """The catalogue's answer to `available`: the op's built kernels whose features are active, most preferred first."""
    cat = load()
    arch = tc.build.arch_name
    fits = [
        k for k in cat.kernels(ROOT, arch, built) if k.op == op and cat.variant_features(arch, k.variant) <= set(active)
    ]
    return [k.name for k in sorted(fits, key=cat.preference, reverse=True)]


def test_available_lists_every_runnable_kernel_most_preferred_first(target_cpu: TargetCpu, info) -> None:
    got = info(target_cpu)
    for op in OPS:
        assert got["available"][op] == runnable_kernels(target_cpu, op, list(got["variants"]), got["active"])
        assert got["available"][op][0] == got["kernels"][op]


@pytest.mark.cpus(["max", "cortex-a53", "cortex-a7"])
def test_kernels_env_selects_by_name_and_keeps_the_choice_under_check(target_cpu: TargetCpu, info) -> None:
    """ISAFORGE_KERNELS picks the least preferred runnable kernel of every op; isaforge-info --check (run by `info`)
    must accept a kernel chosen by name."""
    plain = info(target_cpu)
    least = {op: plain["available"][op][-1] for op in OPS}
    chosen = info(target_cpu, ISAFORGE_KERNELS=",".join(f"{op}={name}" for op, name in least.items()))
    assert chosen["kernels"] == least


@pytest.mark.cpus(["cortex-a53", "cortex-a7"])
def test_kernels_env_reports_each_bad_entry_in_one_line_and_keeps_the_automatic_choice(
    target_cpu: TargetCpu, qemu_run: QemuRunner
) -> None:
    cat = load()
    arch = target_cpu.build.arch_name
    unrunnable = next(
        k.name
        for k in cat.kernels(ROOT, arch, [v.name for v in cat.arch_variants(arch)])
        if k.variant == "i8mm" and k.op == "gemm_s8"
    )
    env = {"ISAFORGE_KERNELS": f"gemm_s8={unrunnable},gemm_f32=gemm_f32_1x1_nope,oops"}
    result = qemu_run(target_cpu.build, target_cpu.cpu, "isaforge-info", env=env)
    assert result.returncode == 0, result.describe()
    lines = [line for line in result.stderr.splitlines() if "ISAFORGE_KERNELS" in line]
    assert len(lines) == 3, result.stderr
    assert unrunnable in lines[0] and "cannot run on this CPU" in lines[0]
    assert "gemm_f32_1x1_nope" in lines[1] and "not built" in lines[1]
    assert "'oops' ignored" in lines[2]
    kernels = json.loads(result.stdout)["kernels"]
    default = json.loads(qemu_run(target_cpu.build, target_cpu.cpu, "isaforge-info").stdout)["kernels"]
    assert kernels == default


def test_api_rejects_bad_input_and_never_touches_c(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    result = qemu_run(target_cpu.build, target_cpu.cpu, "tests/kernels/test_api_errors")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().endswith("0 failed")


def test_info_check_passes_detected_and_under_each_single_cap(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    """`isaforge-info --check`: consistent detection and choice, and an exact small GEMM per op, on the model as
    detected and with each of its features disabled in turn (so every fallback kernel runs too)."""
    for cap in ["", *target_cpu.expected_features]:
        env = {"ISAFORGE_DISABLE": cap} if cap else {}
        result = qemu_run(target_cpu.build, target_cpu.cpu, "isaforge-info", args=["--check"], env=env)
        assert result.returncode == 0, (cap, result.describe())
        assert json.loads(result.stdout)["arch"] == target_cpu.build.arch_name


@pytest.mark.cpus(["max"])
def test_info_check_fails_with_one_line_on_a_wrong_expected_kernel(
    target_cpu: TargetCpu, qemu_run: QemuRunner, info
) -> None:
    chosen = info(target_cpu)["kernels"]["gemm_f32"]
    right = qemu_run(
        target_cpu.build, target_cpu.cpu, "isaforge-info", args=["--check", "--expect-kernel", f"gemm_f32={chosen}"]
    )
    assert right.returncode == 0, right.describe()

    wrong = qemu_run(
        target_cpu.build,
        target_cpu.cpu,
        "isaforge-info",
        args=["--check", "--expect-kernel", "gemm_f32=gemm_f32_4x4_ref"],
    )
    assert wrong.returncode == 1, wrong.describe()
    lines = wrong.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isaforge-info: check failed: "), wrong.stderr
    assert chosen in lines[0] and "gemm_f32_4x4_ref" in lines[0]
