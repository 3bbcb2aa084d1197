"""Static ISA isolation check: does every object contain only instructions its variant (or the baseline) allows?

An object compiled with -DISAFORGE_VARIANT=<variant> (catalogue_entries.VARIANT_DEFINE: every object of a declared
variant library) is held to that variant's flags from the catalogue; every other object to the arch's baseline,
whatever flags it was compiled with, so a project-wide -march, a `target` attribute or a compiler default above the
baseline is caught. For each object of a build's compile_commands.json (Meson's or CMake's) this disassembles the
object with the target's GNU objdump and re-assembles every instruction with the target's GNU assembler, once with
the flags the object is held to and once with the catalogue's `assembler_all` flags. An instruction the first rejects
and the second accepts is a violation; one both reject cannot be written back as source (an objdump-only spelling)
and is only counted. The feature a violation needs is named by assembling it under the catalogue's feature sets,
smallest first. No instruction tables: the assembler is the judge, and the catalogue says which flags mean which
feature.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from itertools import combinations
from pathlib import Path

from isaforge import process, streaming
from isaforge.catalogue import VARIANT_DEFINE, Arch, Catalogue, CatalogueError, load, march_key
from isaforge.errors import IsaforgeError

COMPILE_COMMANDS = "compile_commands.json"
BUILD_DIRECTORY = "Meson or CMake build directory (compile_commands.json; CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
# The compile flags that decide what the assembler accepts; the last of each kind wins, as in the compilers.
ASSEMBLER_FLAG_PREFIXES = ("-march=", "-mcpu=", "-mfpu=", "-mfloat-abi=")
# What `-v` shows of the flags an object was really built with: everything that moves its instruction set.
BUILT_WITH_PREFIXES = (*ASSEMBLER_FLAG_PREFIXES, "-msve-vector-bits=")
BUILT_WITH_FLAGS = ("-marm", "-mthumb")
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
_HOST = "host"


@dataclass(frozen=True)
class Instruction:
    """One disassembled instruction."""

    function: str
    address: int
    text: str  # as objdump shows it, whitespace collapsed
    source: str  # the line handed to the assembler
    thumb: bool  # T32 encoding (arm only)


@dataclass(frozen=True)
class HeldTo:
    """What an object's instructions may use: a declared variant's features, or the arch baseline."""

    arch: str
    variant: str | None  # None: the baseline
    flags: tuple[str, ...]  # the assembler flags of that level, from the catalogue
    allowed: tuple[str, ...]  # the catalogue features they enable

    @property
    def level(self) -> str:
        return f"variant {self.variant}" if self.variant else f"the {self.arch} baseline"

    def describe(self) -> str:
        return f"{self.level} {' '.join(self.flags)} ({', '.join(self.allowed) or 'no catalogue feature'})"


@dataclass(frozen=True)
class Violation:
    """An instruction beyond what its object is held to."""

    object: str
    source: str
    function: str
    address: int
    instruction: str
    needs: str  # a catalogue feature (`dotprod`), a feature set (`sve+bf16`), an -march level, or a description
    allowed: tuple[str, ...]  # the catalogue features the object is held to
    held: str  # `variant dotprod` or `the aarch64 baseline`
    built_with: str  # the object's own ISA flags when they differ from what it is held to, else ""

    def describe(self) -> str:
        allowed = ", ".join(self.allowed) or "no catalogue feature"
        text = f"{self.object}: {self.function}: {self.instruction} (needs {self.needs}; "
        text += f"held to {self.held}, which allows {allowed}"
        if self.built_with:
            text += f"; built with {self.built_with}"
        return text + ")"


@dataclass(frozen=True)
class ObjectReport:
    object: str
    source: str
    held: HeldTo
    built_with: tuple[str, ...]  # its ISA flags in the compile command, in command order
    checked: int  # instructions re-assembled (allowed or violating)
    violations: tuple[Violation, ...]
    unparseable: tuple[Instruction, ...]  # rejected even with assembler_all: objdump-only spellings
    data: int  # literal-pool words and undecodable encodings

    @property
    def arch(self) -> str:
        return self.held.arch

    @property
    def flags(self) -> tuple[str, ...]:
        """What the assembler got: the flags of the level the object is held to."""
        return self.held.flags

    @property
    def allowed(self) -> tuple[str, ...]:
        return self.held.allowed


@dataclass(frozen=True)
class Report:
    objects: tuple[ObjectReport, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def violations(self) -> list[Violation]:
        return [v for o in self.objects for v in o.violations]

    @property
    def checked(self) -> int:
        return sum(o.checked for o in self.objects)

    @property
    def unparseable(self) -> int:
        return sum(len(o.unparseable) for o in self.objects)

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class CompileEntry:
    """One compile_commands.json entry that produced an object."""

    directory: Path
    file: str
    output: Path  # absolute
    args: tuple[str, ...]


# -- compile_commands.json ------------------------------------------------------------------------------------
def read_compile_commands(builddir: Path) -> list[CompileEntry]:
    """The entries of `builddir`/compile_commands.json (Meson's or CMake's) that produced an object."""
    if not builddir.is_dir():
        raise IsaforgeError(
            f"build directory {builddir} does not exist; "
            f"give a {BUILD_DIRECTORY}, configured first (`meson setup` or `cmake -B`)"
        )
    path = builddir / COMPILE_COMMANDS
    if not path.is_file():
        raise IsaforgeError(f"{path} not found; give a {BUILD_DIRECTORY}")
    reconfigure = "reconfigure it (`meson setup --reconfigure`, or cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
    try:
        raw = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IsaforgeError(f"{path} is not valid JSON ({exc}); {reconfigure}") from exc
    if not isinstance(raw, list):
        raise IsaforgeError(f"{path} is not a list of compile commands; {reconfigure}")
    entries = []
    for item in raw:
        if not isinstance(item, dict):
            raise IsaforgeError(f"{path}: an entry is not an object; {reconfigure}")
        directory = Path(item.get("directory") or builddir)
        if not directory.is_absolute():
            directory = builddir / directory
        command = item.get("arguments") or shlex.split(str(item.get("command", "")))
        args = [str(a) for a in command]
        output = item.get("output") or _output_flag(args)
        if not output:
            continue
        out = Path(output)
        entries.append(
            CompileEntry(
                directory, str(item.get("file", "")), out if out.is_absolute() else directory / out, tuple(args)
            )
        )
    return entries


def _output_flag(args: Sequence[str]) -> str | None:
    out = None
    for i, arg in enumerate(args):
        if arg == "-o" and i + 1 < len(args):
            out = args[i + 1]
        elif arg.startswith("-o") and len(arg) > 2:
            out = arg[2:]
    return out


def target_triple(args: Sequence[str]) -> str | None:
    """The cross target of a compile command: clang's --target, or the `<triple>-gcc` (or -clang) driver name.
    None for a host compiler."""
    triple = None
    for i, arg in enumerate(args):
        if arg.startswith("--target="):
            triple = arg.removeprefix("--target=")
        elif arg in ("--target", "-target") and i + 1 < len(args):
            triple = args[i + 1]
    if triple:
        return triple
    # The driver (after wrappers such as ccache): everything before the first option.
    for arg in args:
        if arg.startswith("-"):
            break
        m = re.match(
            r"^(?P<triple>[\w.]+(?:-[\w.]+){2,})-(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(?:-[\d.]+)?$", Path(arg).name
        )
        if m:
            return m["triple"]
    return None


def assembler_flags(args: Sequence[str]) -> list[str]:
    """The -march/-mcpu/-mfpu/-mfloat-abi of a command (the last of each wins, as in the compilers)."""
    last: dict[str, str] = {}
    for arg in args:
        for prefix in ASSEMBLER_FLAG_PREFIXES:
            if arg.startswith(prefix):
                last[prefix] = arg
    if last.get("-mfpu=") == "-mfpu=auto":
        del last["-mfpu="]
    return [last[p] for p in ASSEMBLER_FLAG_PREFIXES if p in last]


def built_with(args: Sequence[str]) -> list[str]:
    """The flags of a compile command that set its instruction set, the variant define included, in command order
    (a repeat of the same flag shown once: Meson repeats the baseline's -march in project and target arguments)."""
    return list(dict.fromkeys(_isa_flags(args)))


def _isa_flags(args: Sequence[str]) -> Iterator[str]:
    for i, arg in enumerate(args):
        if arg in ("-D", "-U") and i + 1 < len(args) and _names_define(args[i + 1]):
            yield arg + args[i + 1]
        elif arg.startswith(BUILT_WITH_PREFIXES) or arg in BUILT_WITH_FLAGS or _is_define(arg):
            yield arg


def _names_define(text: str) -> bool:
    return text.split("=", 1)[0] == VARIANT_DEFINE


def _is_define(flag: str) -> bool:
    """-DISAFORGE_VARIANT=… or -UISAFORGE_VARIANT, as one argument."""
    return flag[:2] in ("-D", "-U") and _names_define(flag[2:])


def declared_variant(args: Sequence[str]) -> str | None:
    """The value of the command's -DISAFORGE_VARIANT=<variant>: the last one, unless a later -U removes it."""
    value: str | None = None
    for flag in _isa_flags(args):
        if flag.startswith("-U"):
            value = None
        elif flag.startswith("-D"):
            # A bare -DISAFORGE_VARIANT defines it as 1, as the compilers do.
            value = flag.partition("=")[2] if "=" in flag else "1"
    return value


def held_to(cat: Catalogue, arch: Arch, args: Sequence[str], *, file: str = "") -> HeldTo:
    """What an object may use: the features of the variant its command declares, else the arch baseline, whatever
    -march it was compiled with."""
    variant = declared_variant(args)
    if variant is None:
        # The compiler only moves -mfp16-format and the like, not what the assembler takes.
        flags = cat.baseline_flags(arch.name, _compiler(args))
    else:
        where = f"{file or 'a compile command'}: "
        define = f"-D{VARIANT_DEFINE}={variant}"
        known = f"choose one of: {', '.join(v.name for v in cat.arch_variants(arch.name))}, or features joined with '+'"
        try:  # a catalogue variant, or a feature set (fp16+dotprod) held to exactly its features
            exists = arch.name in cat.variant(variant).arches
        except CatalogueError as exc:
            if "+" in variant:
                raise IsaforgeError(f"{where}{exc} (in {define})") from exc
            raise IsaforgeError(f"{where}unknown variant {variant!r} in {define}; {known}") from exc
        if not exists:
            raise IsaforgeError(f"{where}variant {variant!r} in {define} has no {arch.name} build; {known}")
        flags = cat.variant_flags(arch.name, _compiler(args), variant)
    isa = assembler_flags(flags)
    allowed = tuple(cat.names(cat.mask(cat.feature_flags_allow(arch.name, isa))))
    return HeldTo(arch.name, variant, tuple(isa), allowed)


def _compiler(args: Sequence[str]) -> str:
    # The driver (after wrappers such as ccache): everything before the first option.
    for arg in args:
        if arg.startswith("-"):
            break
        if "clang" in Path(arg).name:
            return "clang"
    return "gcc"


def is_aarch32(arch: Arch) -> bool:
    """A32/T32 code (Meson's `arm` CPU family): needs .arm/.thumb per instruction and the arm assembler flags."""
    return arch.meson_cpu_family == "arm"


# -- disassembly ------------------------------------------------------------------------------------------------
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


# -- assembling -------------------------------------------------------------------------------------------------
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


# -- naming the feature -----------------------------------------------------------------------------------------
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


# -- the check --------------------------------------------------------------------------------------------------
def check_object(
    obj: Path,
    arch: Arch,
    compile_args: Sequence[str],
    *,
    cat: Catalogue | None = None,
    label: str | None = None,
    source: str = "",
    judged: tuple[tuple[list[Instruction], int], set[int]] | None = None,
) -> ObjectReport:
    """Check one object against what the compile command that produced it holds it to (held_to). `judged`: its
    disassembly and the instructions its flags reject, when a whole build is judged at once (check_builddir)."""
    cat = cat or load()
    held = held_to(cat, arch, compile_args, file=source or str(obj))
    shown = built_with(compile_args)
    own = assembler_flags(compile_args)
    # The violation lines say how the object was built only when that differs from what it is held to: the leak's
    # likely cause (a global -march, a compiler default), without repeating the flags of a well-built object.
    if set(own) == set(held.flags):
        beyond = ""
    else:
        beyond = " ".join(f for f in shown if not _is_define(f)) if own else "no -march (the compiler's default)"
    label = label or str(obj)
    (insns, data), rejects = judged or (disassemble(obj, arch), None)
    with tempfile.TemporaryDirectory(prefix="isaforge-iso-") as tmp:
        work = Path(tmp)
        suspects = sorted(rejects if rejects is not None else rejected(arch, insns, held.flags, work))
        bad_all = rejected(arch, [insns[i] for i in suspects], arch.assembler_all, work)
        unparseable = [insns[i] for k, i in enumerate(suspects) if k in bad_all]
        violating = [insns[i] for k, i in enumerate(suspects) if k not in bad_all]
        needs = name_needs(cat, arch, violating, work)
        found = list(zip(violating, needs, strict=True))
        if streaming.applies(arch):
            accepted = [insn for i, insn in enumerate(insns) if i not in set(suspects)]
            found += _streaming_breaches(cat, arch, accepted, held, work)
    violations = tuple(
        Violation(label, source, insn.function, insn.address, insn.text, need, held.allowed, held.level, beyond)
        for insn, need in sorted(found, key=lambda item: item[0].address)
    )
    return ObjectReport(
        label, source, held, tuple(shown), len(insns) - len(unparseable), violations, tuple(unparseable), data
    )


def _streaming_breaches(
    cat: Catalogue, arch: Arch, insns: Sequence[Instruction], held: HeldTo, work: Path
) -> list[tuple[Instruction, str]]:
    """The streaming contract (streaming.py) on the instructions the object's flags allow."""

    def reject(indexes: Sequence[int], flags: Sequence[str]) -> set[int]:
        order = list(indexes)
        return {order[k] for k in rejected(arch, [insns[i] for i in order], flags, work)}

    def flags_of(features: Sequence[str]) -> list[str]:
        return feature_set_flags(cat, arch, features)

    functions, texts = [i.function for i in insns], [i.text for i in insns]
    found = streaming.breaches(cat, arch, functions, texts, held.allowed, (reject, flags_of))
    return [(insns[b.index], b.needs) for b in found]


def check_builddir(builddir: Path, *, cat: Catalogue | None = None, jobs: int | None = None) -> Report:
    """Check every cross-compiled object of a Meson or CMake build directory."""
    cat = cat or load()
    builddir = Path(builddir)
    entries = read_compile_commands(builddir)
    notes: list[str] = []
    work: list[tuple[CompileEntry, Arch]] = []
    host = missing = 0
    for entry in entries:
        triple = target_triple(entry.args)
        if triple is None:
            host += 1
            continue
        try:
            arch = cat.arch_by_triple(triple)
        except CatalogueError as exc:
            raise IsaforgeError(f"{entry.file}: {exc}") from exc
        # A wrong variant name stops the run before any object is checked.
        held_to(cat, arch, entry.args, file=entry.file)
        if not entry.output.is_file():
            missing += 1
            continue
        work.append((entry, arch))
    if host:
        notes.append(f"skipped {host} host-build object(s): no cross target in the compile command")
    if missing:
        notes.append(f"skipped {missing} object(s) not built yet; build {builddir} first")
    if missing and not work:
        raise IsaforgeError(
            f"no cross-compiled object of {builddir / COMPILE_COMMANDS} exists yet; "
            f"build first (`meson compile -C {builddir}` or `cmake --build {builddir}`)"
        )

    judged = _judge_together(cat, work)

    def one(item: tuple[CompileEntry, Arch]) -> ObjectReport:
        entry, arch = item
        label = _label(entry.output, builddir)
        return check_object(
            entry.output, arch, entry.args, cat=cat, label=label, source=entry.file, judged=judged[entry.output]
        )

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        objects = tuple(pool.map(one, work))
    return Report(objects, tuple(notes))


def _judge_together(
    cat: Catalogue, work: Sequence[tuple[CompileEntry, Arch]]
) -> dict[Path, tuple[tuple[list[Instruction], int], set[int]]]:
    """Every object's disassembly and the instructions its flags reject, with one objdump run per arch and one
    assembler run per set of flags objects are held to (each object's instructions in their order, so that
    movprfx keeps its partner): a build's few dozen runs instead of two per object."""
    listings: dict[Path, tuple[list[Instruction], int]] = {}
    for arch in {a.name: a for _, a in work}.values():
        objs = [entry.output for entry, a in work if a.name == arch.name]
        listings.update(zip(objs, disassemble_all(objs, arch), strict=True))
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[Path, Arch]]] = {}
    for entry, arch in work:
        flags = held_to(cat, arch, entry.args, file=entry.file).flags
        groups.setdefault((arch.name, flags), []).append((entry.output, arch))
    judged: dict[Path, tuple[tuple[list[Instruction], int], set[int]]] = {}
    with tempfile.TemporaryDirectory(prefix="isaforge-iso-") as tmp:
        for (_, flags), members in groups.items():
            together = [insn for obj, _ in members for insn in listings[obj][0]]
            bad = rejected(members[0][1], together, flags, Path(tmp))
            start = 0
            for obj, _ in members:
                count = len(listings[obj][0])
                judged[obj] = (listings[obj], {i - start for i in bad if start <= i < start + count})
                start += count
    return judged


def _label(path: Path, builddir: Path) -> str:
    try:
        return str(path.resolve().relative_to(builddir.resolve()))
    except ValueError:
        return str(path)
