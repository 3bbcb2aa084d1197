"""The judge of check-isolation: the target's objdump lists an object's instructions, and its assembler says which
of them it rejects under a set of flags, for a whole batch of instructions in one run. The tools are the arch's
catalogue `judge`: GNU binutils of the triple, or the clang compiler's LLVM tools. No instruction tables: the
assembler is the judge.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from isaforge import process
from isaforge.catalogue import Arch, load
from isaforge.errors import IsaforgeError

# Flags every arm re-assembly needs: the hard-float ABI of the triple, and IT blocks made for conditional Thumb
# instructions (objdump's own `it` lines are dropped, so skipped lines cannot break an IT block).
ARM_ASSEMBLER_EXTRA = ("-mfloat-abi=hard", "-mimplicit-it=always")

_FUNCTION = re.compile(r"^[0-9a-fA-F]+ <(?P<name>.+)>:$")
_INSN = re.compile(r"^\s*(?P<addr>[0-9a-fA-F]+):\s(?P<raw>[0-9a-fA-F]+(?: [0-9a-fA-F]+)*)\s*\t(?P<text>.*)$")
# objdump's trailing comments: `// #0` (aarch64), `@ 0x5678` and `; undefined` (arm); llvm-objdump's `// =0x10`.
_COMMENT = re.compile(r"\s+(?://|@|;)(?:\s.*)?$")
# A symbolic target `34 <f+0x34>`: rewritten to `.+4`, a target every PC-relative form can reach.
_SYMBOLIC = re.compile(r"\b(?:0x)?[0-9a-fA-F]+ <[^>]*>")
# objdump writes all-lanes register ranges as `{d0[]-d1[]}`; the assembler only takes the list `{d0[], d1[]}`.
_LANE_RANGE = re.compile(r"\{d(?P<first>\d+)(?P<lane>\[\d*\])-d(?P<last>\d+)(?P=lane)\}")
# objdump writes a VFP immediate as its encoding with the value in the comment: `vmov.f64 d16, #120 @ 0x3fc00000  1.5`.
# NEON's vmov.f32 shows the value itself, as an integer the assembler only reads back as a float: `q9, #-7 @ 0x…`.
_NEON_FLOAT_IMM = re.compile(r"^(?P<insn>vmov\.f32\s+[qd]\d+,\s*#)(?P<value>-?\d+)\s+@\s+0x[0-9a-fA-F]+\s*$")
_VFP_IMM = re.compile(
    r"^(?P<insn>vmov(?:[a-z]{2})?\.f\d+\s+\S+,\s*#)\d+\s+@\s+0x[0-9a-fA-F]+\s+(?P<value>-?[0-9.]+)\s*$"
)
_IT = re.compile(r"^it[te]{0,3}$")
# GNU as: `insns.s:3: Error: …`; clang: `insns.s:3:1: error: instruction requires: sme`.
_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?:Error|error): (?P<msg>.*)$")
# Undecodable words: GNU's `.inst 0x… ; undefined` and `<UNDEFINED> instruction`, LLVM's `<unknown>`.
_UNDECODED = ("<UNDEFINED>", "; undefined", "<unknown>")


@dataclass(frozen=True)
class Instruction:
    """One disassembled instruction."""

    function: str
    address: int
    text: str  # as objdump shows it, whitespace collapsed
    source: str  # the line handed to the assembler
    thumb: bool  # T32 encoding (arm only)


def is_aarch32(arch: Arch) -> bool:
    """A32/T32 code (Meson's `arm` CPU family): needs .arm/.thumb per instruction and the arm assembler flags."""
    return arch.meson_cpu_family == "arm"


def disassemble(obj: Path, arch: Arch) -> tuple[list[Instruction], int]:
    """The instructions of every executable section of `obj`, and the number of data / undecodable words."""
    return disassemble_all([obj], arch)[0]


# Where objdump's output for one of several files starts: `path:     file format elf64-littleaarch64`.
_FILE_HEADER = re.compile(r"^(?P<path>.+):\s+file format ", re.M)
OBJDUMP_BATCH = 200  # files per objdump run: one run per build, not per object


def disassemble_all(objs: Sequence[Path], arch: Arch) -> list[tuple[list[Instruction], int]]:
    """disassemble() of each object, with one objdump run per OBJDUMP_BATCH of them."""
    out: list[tuple[list[Instruction], int]] = []
    for start in range(0, len(objs), OBJDUMP_BATCH):
        batch = [str(o) for o in objs[start : start + OBJDUMP_BATCH]]
        what = f"disassembly of {batch[0]}{' and others' if len(batch) > 1 else ''} (rebuild the objects)"
        text = process.run([_judge(arch).objdump, "-d", "-w", *batch], what=what).stdout
        heads = list(_FILE_HEADER.finditer(text))
        if len(heads) != len(batch):
            raise IsaforgeError(f"{_judge(arch).objdump} printed {len(heads)} files for {len(batch)} objects")
        ends = [h.start() for h in heads[1:]] + [len(text)]
        out += [parse_objdump(text[h.end() : end], arm=is_aarch32(arch)) for h, end in zip(heads, ends, strict=True)]
    return out


def parse_objdump(text: str, *, arm: bool) -> tuple[list[Instruction], int]:
    """Instructions of `objdump -d -w` output (raw encodings shown), and the count of data words it skipped."""
    insns: list[Instruction] = []
    data = 0
    function = "?"
    for line in text.splitlines():
        fm = _FUNCTION.match(line)
        if fm:
            function = fm["name"]
            continue
        m = _INSN.match(line)
        if not m:
            continue
        body = m["text"]
        mnemonic = body.split(maxsplit=1)[0] if body.strip() else ""
        if not mnemonic or mnemonic.startswith(".") or any(word in body for word in _UNDECODED):
            data += 1  # .word/.short/.byte literal pools and undecodable words
            continue
        if arm and _IT.match(mnemonic):
            continue
        if vfp := _VFP_IMM.match(body):
            code = vfp["insn"] + vfp["value"]
        elif neon := _NEON_FLOAT_IMM.match(body):
            code = f"{neon['insn']}{neon['value']}.0"
        else:
            code = _COMMENT.sub("", body)
        source = _LANE_RANGE.sub(_lane_list, _SYMBOLIC.sub(".+4", code)).strip()
        shown = " ".join(code.split())
        # objdump prints an A32 word as 8 contiguous hex digits and T32 as 4-digit halfwords.
        thumb = arm and all(len(group) == 4 for group in m["raw"].split())
        insns.append(Instruction(function, int(m["addr"], 16), shown, source, thumb))
    return insns, data


def _lane_list(m: re.Match[str]) -> str:
    regs = range(int(m["first"]), int(m["last"]) + 1)
    return "{" + ", ".join(f"d{r}{m['lane']}" for r in regs) + "}"


def rejected(arch: Arch, insns: Sequence[Instruction], flags: Sequence[str], workdir: Path) -> set[int]:
    """Indexes into `insns` the assembler rejects under `flags`: one assembler call for the whole batch."""
    if not insns:
        return set()
    arm = is_aarch32(arch)
    lines: list[str] = []
    line_of: dict[int, int] = {}  # .s line number -> instruction index
    mode: bool | None = None
    if arm:
        lines.append(".syntax unified")
    for i, insn in enumerate(insns):
        if arm and insn.thumb != mode:
            mode = insn.thumb
            lines.append(".thumb" if insn.thumb else ".arm")
        lines.append(insn.source)
        line_of[len(lines)] = i
    src = workdir / "insns.s"
    src.write_text("\n".join(lines) + "\n")
    cmd = [*_judge(arch).assembler, *flags, *(ARM_ASSEMBLER_EXTRA if arm else ()), "-o", str(workdir / "insns.o")]
    cmd.append(str(src))
    # A failing run is expected: the lines it rejects are the instructions the feature set lacks.
    proc = process.run(cmd, what="assembling the instructions", check=False)
    bad: set[int] = set()
    stray: list[str] = []
    for line in proc.stderr.splitlines():
        m = _ERROR.match(line)
        if m and int(m["line"]) in line_of:
            bad.add(line_of[int(m["line"])])
        elif "Error" in line or "error" in line:
            stray.append(line.strip())
    if stray:
        raise IsaforgeError(
            f"`{shlex.join(cmd[:-1])}` fails outside any instruction ({stray[0]}); "
            "check the object's -march/-mfpu flags"
        )
    if proc.returncode != 0 and not bad:
        first = next((ln.strip() for ln in proc.stderr.splitlines() if ln.strip()), "no output")
        raise IsaforgeError(f"`{shlex.join(cmd[:-1])}` failed: {first}")
    return bad


@dataclass(frozen=True)
class Judge:
    """The tools that read an object back and say what its instructions need (the arch's catalogue `judge`)."""

    objdump: str
    assembler: tuple[str, ...]  # followed by the flags, -o and the source


@cache  # asked for on every assembler and objdump run; the tools are looked up on PATH once
def _judge(arch: Arch) -> Judge:
    if arch.judge == "llvm":
        clang = load().compiler("clang")
        _need(clang.objdump, " ".join(clang.debian_packages))
        _need(clang.command(arch)[0], " ".join(clang.debian_packages))
        return Judge(clang.objdump, (*clang.command(arch), "-x", "assembler", "-c", "-w"))
    return Judge(_tool(arch, "objdump"), (_tool(arch, "as"), "--no-warn"))


def _tool(arch: Arch, name: str) -> str:
    return _need(f"{arch.triple}-{name}", " ".join(arch.debian_packages))


def _need(tool: str, packages: str) -> str:
    if shutil.which(tool) is None:
        raise IsaforgeError(f"{tool} not found on PATH; install {packages}")
    return tool
