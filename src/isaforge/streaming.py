"""The streaming contract of SME kernels, checked on an object's disassembly by check-isolation.

In an object that may not use SME, `smstart` and `smstop` are caught here (LLVM's assembler takes them at any level,
as the MSRs they are). A kernel's entry is a normal call (non-streaming, ZA off): it starts streaming mode itself
(`smstart`) and stops it before it returns (`smstop`), as the public SME libraries' kernels do. In an object held
to a variant with SME, each function is read in layout order from its entry, with streaming mode and ZA off:

* an instruction that needs SME (the judge rejects it once the SME features are taken away: outer products, ZA
  moves, streaming SVE) must be inside a streaming region; the ZA array's own loads, stores and zeroing (`ldr`,
  `str`, `zero` of za or zt0) need only ZA on (`smstart za`), and `rdsvl`, `smstart`, `smstop` and the SME system
  registers' `mrs` and `msr` nothing more;
* inside a streaming region there is no NEON and no non-streaming SVE (the judge rejects them under the variant's
  flags with `+nosimd` and without SVE), unless the object's variant requires `sme_fa64`: without FA64 they fault
  there (Apple M4 has no FA64);
* no call (`bl`, `blr`) leaves a streaming region: the callee, a normal function, would run in streaming mode.

Layout order is a straight reading: a kernel that enters streaming mode on one path and not on another is read as its
code is laid out. The AAPCS64's callee-saved registers and ZA at the call boundary are proven at run time instead
(tests/kernels/test_call_boundary.c for libisaforge's kernels; an engine's own tests, as the example's do).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from isaforge.catalogue import Arch, Catalogue

# SME, which every feature that needs streaming mode implies, and FA64, which lifts the NEON ban inside it.
SME = "sme"
FA64 = "sme_fa64"
CALLS = ("bl", "blr", "blraa", "blraaz", "blrab", "blrabz")
# Legal in either mode: the mode switches, the SVL and the SME system registers (SVCR, TPIDR2_EL0, SMCR).
CONTROL = ("smstart", "smstop", "rdsvl", "mrs", "msr")
ZA_STORAGE = ("ldr", "str", "zero")
REGION = "smstart … smstop"


@dataclass(frozen=True)
class Breach:
    """One instruction against the streaming contract: its index among the object's instructions and what it
    needs (the violation's `needs`)."""

    index: int
    needs: str


@dataclass
class _Mode:
    streaming: bool = False
    za: bool = False

    def switch(self, text: str) -> None:
        words = text.split()
        on = words[0] == "smstart"
        what = words[1] if len(words) > 1 else ""
        if what in ("", "sm"):
            self.streaming = on
        if what in ("", "za"):
            self.za = on


Rejected = Callable[[Sequence[int], Sequence[str]], set[int]]  # (instruction indexes, flags) -> rejected indexes
FlagsOf = Callable[[Sequence[str]], list[str]]  # features -> the assembler flags that enable exactly them


def applies(arch: Arch) -> bool:
    """Whether the contract is checked on `arch`: its judge reads SME."""
    return arch.judge == "llvm"


def breaches(
    cat: Catalogue,
    arch: Arch,
    functions: Sequence[str],
    texts: Sequence[str],
    allowed: Sequence[str],
    judge: tuple[Rejected, FlagsOf],
) -> list[Breach]:
    """The instructions (by index; `functions[i]` and `texts[i]` per instruction, in layout order) that break the
    contract. The judge: `reject(indexes, flags)`, which of those instructions the assembler rejects under flags, and
    `flags_of(features)`."""
    reject, flags_of = judge
    everything = range(len(texts))
    if SME not in allowed:  # LLVM takes smstart at any level (an MSR); it faults where SME is not
        return [Breach(i, SME) for i in everything if texts[i].split(maxsplit=1)[0] in ("smstart", "smstop")]
    without_sme = [f for f in allowed if SME not in cat.implied_closure(arch.name, f)]
    needs_sme = reject(everything, flags_of(without_sme))
    modes = _modes(functions, texts)
    out = [Breach(i, f"a streaming region ({REGION})") for i in sorted(needs_sme) if _outside(texts[i], modes[i])]
    inside = [i for i in everything if modes[i].streaming]
    out += [Breach(i, f"no call inside {REGION}: the callee would run streaming") for i in inside if _call(texts[i])]
    if FA64 not in allowed:
        streaming_legal = [f for f in allowed if "sve" not in cat.implied_closure(arch.name, f)]
        flags = [f"{flag}+nosimd" if flag.startswith("-march=") else flag for flag in flags_of(streaming_legal)]
        illegal = reject(inside, flags)
        out += [Breach(i, f"{FA64} (NEON or non-streaming SVE inside {REGION})") for i in sorted(illegal)]
    return sorted(out, key=lambda b: b.index)


def _modes(functions: Sequence[str], texts: Sequence[str]) -> list[_Mode]:
    """The mode each instruction runs in (before it executes), reading each function from a normal entry."""
    modes: list[_Mode] = []
    mode, current = _Mode(), None
    for function, text in zip(functions, texts, strict=True):
        if function != current:
            mode, current = _Mode(), function
        modes.append(_Mode(mode.streaming, mode.za))
        if text.split()[0] in ("smstart", "smstop"):
            mode.switch(text)
    return modes


def _outside(text: str, mode: _Mode) -> bool:
    """An instruction that needs SME, where it may not run: out of streaming mode, save the ZA storage ones with ZA
    on and the mode switches themselves."""
    mnemonic = text.split(maxsplit=1)[0]
    if mode.streaming or mnemonic in CONTROL:
        return False
    operands = text.removeprefix(mnemonic)
    touches_za = "za" in operands or "zt0" in operands
    return not (mode.za and mnemonic in ZA_STORAGE and touches_za)


def _call(text: str) -> bool:
    return text.split(maxsplit=1)[0] in CALLS
