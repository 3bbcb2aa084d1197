"""What a violating instruction needs, named from the catalogue: the smallest architecture level or feature set under
which the judge's assembler accepts it, and the features that are alternatives to it (streaming SVE: `sve or sme`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from pathlib import Path

from isaforge import streaming
from isaforge.catalogue import Arch, Catalogue, march_key
from isaforge.isolation_judge import Instruction, rejected


def feature_set_flags(cat: Catalogue, arch: Arch, features: Iterable[str]) -> list[str]:
    """Assembler flags that enable exactly `features` (and what they imply) on `arch`, the way variants are built."""
    closure: set[str] = set()
    for name in features:
        closure |= cat.implied_closure(arch.name, name)
    per = [cat.features[n].per_arch[arch.name] for n in sorted(closure, key=lambda n: cat.features[n].bit)]
    exts = [f.ext for f in per if f.ext]
    if not exts:
        return list(arch.baseline)
    return [f"-march={_highest(f.march for f in per)}{''.join(exts)}", *arch.variant_extra]


def _highest(levels: Iterable[str]) -> str:
    return max(levels, key=march_key)


NAMED_SET_SIZE = 3


def _candidates(cat: Catalogue, arch: Arch) -> list[tuple[str, list[str]]]:
    """(name, flags) to try for naming a violation, smallest first: bare architecture levels, then feature sets."""
    feats = [f.name for f in sorted(cat.arch_features(arch.name), key=lambda f: f.bit)]
    baseline_march = next((f.removeprefix("-march=") for f in arch.baseline if f.startswith("-march=")), "")
    out: list[tuple[str, list[str]]] = []
    levels = sorted({cat.features[n].per_arch[arch.name].march for n in feats}, key=march_key)
    for level in levels:
        if march_key(level) > march_key(baseline_march):
            out.append((level, [f"-march={level}", *arch.variant_extra]))
    seen: set[frozenset[str]] = set()
    # An instruction needs one feature or two (bfmmla: bf16; SVE's bfmmla: svebf16, which is sve+bf16), rarely three;
    # trying every subset would be 2^features assembler runs. The whole set comes last and names what is left.
    for size in range(1, min(NAMED_SET_SIZE, len(feats)) + 1):
        for combo in combinations(feats, size):
            # Sets that imply the same features as a smaller one (sve+neon is sve) add nothing.
            closure = frozenset().union(*(cat.implied_closure(arch.name, n) for n in combo))
            if closure not in seen:
                seen.add(closure)
                out.append(("+".join(combo), feature_set_flags(cat, arch, combo)))
    if len(feats) > NAMED_SET_SIZE:
        out.append(("+".join(feats), feature_set_flags(cat, arch, feats)))
    return out


def name_needs(cat: Catalogue, arch: Arch, insns: Sequence[Instruction], workdir: Path) -> list[str]:
    """For each instruction (each rejected by its object's flags, accepted by assembler_all), what it needs."""
    if not insns:  # a clean object: the candidate sets (hundreds) are not worth building
        return []
    todo = set(range(len(insns)))
    needs = ["an extension outside the catalogue"] * len(insns)
    every = feature_set_flags(cat, arch, [f.name for f in cat.arch_features(arch.name)])
    outside = rejected(arch, insns, every, workdir)
    todo -= outside
    for name, flags in _candidates(cat, arch):
        if not todo:
            break
        order = sorted(todo)
        still = rejected(arch, [insns[i] for i in order], flags, workdir)
        for k, i in enumerate(order):
            if k not in still:
                needs[i] = name
                todo.discard(i)
    return _alternatives(cat, arch, insns, needs, workdir)


SHARING_FAMILIES = {"sve", streaming.SME}  # streaming SVE is in both


def _alternatives(cat: Catalogue, arch: Arch, insns: Sequence[Instruction], needs: list[str], work: Path) -> list[str]:
    """An instruction one feature names may have another that is no more nor less than it: streaming SVE (`ptrue`)
    is `sve or sme`. Features that imply the named one (sve for an fp16 instruction) add nothing and are left out.
    Only SVE's and SME's families share instructions that way (an assembler run per feature tried, so only those
    are tried)."""
    ordered = sorted(cat.arch_features(arch.name), key=lambda f: f.bit)
    closure = {f.name: cat.implied_closure(arch.name, f.name) for f in ordered}
    closure = {name: reach for name, reach in closure.items() if reach & SHARING_FAMILIES}
    named = [i for i, need in enumerate(needs) if need in closure]
    if not named:
        return needs
    out = list(needs)
    found = {i: [needs[i]] for i in named}
    for other, reach in closure.items():
        # Neither more nor less than any feature already found for the instruction (sme2 adds nothing to sme).
        apart = [i for i in named if not any(reach >= closure[f] or closure[f] >= reach for f in found[i])]
        flags = feature_set_flags(cat, arch, [other])
        # Flags that enable a found feature anyway (sme_fa64's +sve+bf16 make svebf16) say nothing new.
        enabled = cat.feature_flags_allow(arch.name, flags)
        apart = [i for i in apart if enabled.isdisjoint(found[i])]
        if not apart:
            continue
        still = rejected(arch, [insns[i] for i in apart], flags, work)
        for k, i in enumerate(apart):
            if k not in still:
                found[i].append(other)
                out[i] += f" or {other}"
    return out
