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

The compile commands are read by compile_commands.py, objects listed and instructions judged by isolation_judge.py,
a violation's needs named by isolation_needs.py and the streaming contract of SME kernels checked by streaming.py;
this module holds each object to its level and gathers the report.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from isaforge import streaming
from isaforge.catalogue import VARIANT_DEFINE, Arch, Catalogue, CatalogueError, load
from isaforge.compile_commands import (
    COMPILE_COMMANDS,
    CompileEntry,
    assembler_flags,
    built_with,
    compiler_of,
    declared_variant,
    is_define,
    read_compile_commands,
    target_triple,
)
from isaforge.errors import IsaforgeError
from isaforge.isolation_judge import Instruction, disassemble, disassemble_all, rejected
from isaforge.isolation_needs import feature_set_flags, name_needs


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


def held_to(cat: Catalogue, arch: Arch, args: Sequence[str], *, file: str = "") -> HeldTo:
    """What an object may use: the features of the variant its command declares, else the arch baseline, whatever
    -march it was compiled with."""
    variant = declared_variant(args)
    if variant is None:
        # The compiler only moves -mfp16-format and the like, not what the assembler takes.
        flags = cat.baseline_flags(arch.name, compiler_of(args))
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
        flags = cat.variant_flags(arch.name, compiler_of(args), variant)
    isa = assembler_flags(flags)
    allowed = tuple(cat.names(cat.mask(cat.feature_flags_allow(arch.name, isa))))
    return HeldTo(arch.name, variant, tuple(isa), allowed)


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
        beyond = " ".join(f for f in shown if not is_define(f)) if own else "no -march (the compiler's default)"
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
