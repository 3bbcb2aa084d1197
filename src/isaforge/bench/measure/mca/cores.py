"""The cores the bench models: their ISA (from clang), their scheduling model (from llvm-mca) and their SVE vector
length (a hardware fact LLVM's models leave out)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from isaforge.bench import run_tool
from isaforge.bench.measure.mca.llvm_mca import run_mca
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError

CLANG = "clang-19"
ARCH = "aarch64"


# The cores modeled, and the SVE vector length of each (hardware facts: Neoverse V1 has 256-bit SVE, N2 and V2
# 128-bit; N1 and the Cortex-A55 have none). Which ISA each core has comes from LLVM itself (core_features).
CORES = ("neoverse-n1", "neoverse-n2", "neoverse-v1", "neoverse-v2")
SHORT_CORE = {"neoverse-n1": "N1", "neoverse-n2": "N2", "neoverse-v1": "V1", "neoverse-v2": "V2"}
SVE_BITS = {"cortex-a55": 0, "neoverse-n1": 0, "neoverse-n2": 128, "neoverse-v1": 256, "neoverse-v2": 128}
# Marketing names and the -mcpu LLVM knows them by. Which scheduling model LLVM 19 uses for each is read from
# llvm-mca (scheduling_model); a core without a model of its own stands in as its nearest modeled sibling:
# the Cortex-A76 is the core Neoverse N1 was built from.
MARKETING = (
    ("Cortex-A76", "cortex-a76"),
    ("Neoverse N1", "neoverse-n1"),
    ("Cortex-A710", "cortex-a710"),
    ("Cortex-X2", "cortex-x2"),
    ("Neoverse N2", "neoverse-n2"),
    ("Neoverse V1", "neoverse-v1"),
    ("Neoverse V2", "neoverse-v2"),
)
STAND_IN = {"cortex-a76": "neoverse-n1"}
# Catalogue feature -> LLVM subtarget attribute where the spelling differs.
LLVM_ATTR = {"fp16": "fullfp16"}


def mattr_for(features: Iterable[str]) -> str:
    # Features without an extension of their own (svei8mm) are no LLVM attribute: what they imply enables them.
    cat = load()
    return ",".join(f"+{LLVM_ATTR.get(f, f)}" for f in sorted(features) if not cat.is_derived(ARCH, f))


@cache
def core_features(core: str) -> frozenset[str]:
    """Catalogue features LLVM enables for `-mcpu=core` (`clang --print-enabled-extensions`); baseline ones always."""
    out = run_tool(
        [CLANG, f"--target={load().arch(ARCH).triple}", f"-mcpu={core}", "--print-enabled-extensions"],
        f"feature list of {core}",
    )
    enabled = {f.lower() for f in re.findall(r"\bFEAT_(\w+)", out)}
    cat = load()
    baseline_march = cat.arch(ARCH).meson_cpu
    have = set()
    for feat in cat.arch_features(ARCH):
        spec = feat.per_arch[ARCH]
        named = re.search(r"\(FEAT_(\w+)\)", feat.title)
        if (spec.march == baseline_march and not spec.ext) or (named and named[1].lower() in enabled):
            have.add(feat.name)
    # The architecture ties SVE's int8/bf16 matrix multiplies to SVE plus I8MM/BF16 (no FEAT_ name of their own).
    for feat in cat.arch_features(ARCH):
        if cat.is_derived(ARCH, feat.name) and set(feat.per_arch[ARCH].implies) <= have:
            have.add(feat.name)
    return frozenset(have)


@cache
def scheduling_model(mcpu: str) -> str:
    """The scheduling model LLVM uses for `mcpu`, named by its resources' prefix (N1, N2, V1, V2, A57, …)."""
    result = run_mca("nop\n", mcpu, "", iterations=1)
    prefixes = {m[1] for unit in result.units if (m := re.match(r"^(\w+?)Unit", unit))}
    return prefixes.pop() if len(prefixes) == 1 else "?"


def modeled_as(mcpu: str) -> str:
    model = scheduling_model(mcpu)
    for core in CORES:
        if scheduling_model(core) == model:
            return core
    return STAND_IN.get(mcpu, "")


def core_map() -> list[dict[str, str]]:
    rows = []
    for marketing, mcpu in MARKETING:
        core = modeled_as(mcpu)
        rows.append(
            {
                "name": marketing,
                "mcpu": mcpu,
                "llvm_model": scheduling_model(mcpu),
                "modeled_as": core,
                "note": "no model of its own in LLVM 19: stands in as " + core if mcpu in STAND_IN else "",
            }
        )
    return rows


def check_cores(cores: Sequence[str]) -> list[str]:
    unknown = [c for c in cores if c not in CORES]
    if unknown:
        raise IsaforgeError(f"unknown core {unknown[0]!r}; choose from: {', '.join(CORES)}")
    return list(cores)
