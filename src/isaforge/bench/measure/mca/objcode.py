"""llvm-objdump's disassembly of the micro-kernels, and the loops in it (ranges closed by a backward branch)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from isaforge.bench import run_tool

LLVM_OBJDUMP = "llvm-objdump-19"
KERNEL_PREFIX = "isf_ukernel_"  # the symbol of micro-kernel <name>: isf_ukernel_<name>
BRANCH = re.compile(r"^(?:b|b\.\w+|bc\.\w+|cbn?z|tbn?z)$")
SYMBOL_REF = re.compile(r"(?:0x)?[0-9a-f]+ <[^>]*>")


@dataclass(frozen=True)
class Insn:
    addr: int
    mnemonic: str
    operands: tuple[str, ...]
    raw: str = ""
    target: int | None = None  # branch target, for direct branches

    @property
    def text(self) -> str:
        return f"{self.mnemonic}\t{', '.join(self.operands)}" if self.operands else self.mnemonic

    @property
    def is_load(self) -> bool:
        return self.mnemonic.startswith("ld")


SYMBOL_LINE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(?:([0-9a-f]{8}|(?:[0-9a-f]{2} ){3}[0-9a-f]{2})\s+)?(\S+)(?:\s+(.*))?$")


def split_operands(text: str) -> tuple[str, ...]:
    """Operands split at top-level commas (not inside [..] or {..})."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return tuple(out)


def _symbol_instructions(text: str) -> Iterator[tuple[int, str, Insn]]:
    """`llvm-objdump -d` output → (the number of the symbol line it stands under, that symbol, instruction)."""
    block, name = -1, None
    for line in text.splitlines():
        sym = SYMBOL_LINE.match(line)
        if sym:
            block, name = block + 1, sym[2]
            continue
        m = INSN_LINE.match(line)
        if m is None or name is None:
            continue
        mnemonic, rest = m[3], (m[4] or "").split("//", 1)[0].strip()
        operands = split_operands(rest)
        target = None
        if BRANCH.match(mnemonic) and operands:
            ref = re.match(r"^(?:0x)?([0-9a-f]+)(?: <.*>)?$", operands[-1])
            target = int(ref[1], 16) if ref else None
        yield block, name, Insn(int(m[1], 16), mnemonic, operands, (m[2] or "").replace(" ", ""), target)


def parse_objdump(text: str) -> dict[str, list[Insn]]:
    """`llvm-objdump -d` output → instructions per function symbol (the first definition of each name wins)."""
    funcs: dict[str, list[Insn]] = {}
    first: dict[str, int] = {}
    for block, name, insn in _symbol_instructions(text):
        if first.setdefault(name, block) == block:
            funcs.setdefault(name, []).append(insn)
    return funcs


def instructions_by_address(text: str) -> dict[int, Insn]:
    """Every instruction of `llvm-objdump -d` output by address, including those of a static function whose name
    another object's static function has too (several kernels each have their own `quant_tile`)."""
    return {insn.addr: insn for _block, _name, insn in _symbol_instructions(text)}


def disassemble(path: Path) -> dict[str, list[Insn]]:
    out = run_tool([LLVM_OBJDUMP, "-d", "--no-show-raw-insn", str(path)], f"disassembly of {path.name}")
    return parse_objdump(out)


@dataclass(frozen=True)
class Loop:
    body: tuple[Insn, ...]

    @property
    def start(self) -> int:
        return self.body[0].addr

    @property
    def end(self) -> int:
        return self.body[-1].addr


def loops(insns: Sequence[Insn]) -> list[Loop]:
    """Every range closed by a backward branch: from its target to the branch."""
    out = []
    for br in insns:
        if br.target is not None and br.target <= br.addr:
            target = br.target
            body = tuple(i for i in insns if target <= i.addr <= br.addr)
            if body:
                out.append(Loop(body))
    return out


def mca_source(loop: Loop) -> str:
    """The loop body as assembler llvm-mca accepts: branch targets and symbol references become labels."""
    lines = [".Lloop:"]
    for insn in loop.body:
        ops = list(insn.operands)
        if insn.target is not None:
            ops[-1] = ".Lloop" if insn.target == loop.start else ".Lexit"
        ops = [SYMBOL_REF.sub(".Lexit", op) for op in ops]
        lines.append(f"\t{insn.mnemonic}\t{', '.join(ops)}" if ops else f"\t{insn.mnemonic}")
    lines.append(".Lexit:")
    return "\n".join(lines) + "\n"
