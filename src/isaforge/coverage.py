"""What `isaforge test-qemu` proves about a build: which kernels it has (the manifests its build wrote), which ran or
were refused on each CPU model and cap (the ISAFORGE_TRACE files of the test runs), the verdicts, the coverage matrix
and the JSON report.

A manifest `isaforge-kernels-<owner>.json` lists the kernels one build made (name, op, variant, required features)
and the variants it dropped. A trace has one line per event: `ran <owner> <kernel>` the first time a kernel runs in a
process, `refused <owner> <kernel>` for each kernel the active features exclude when the process first dispatches, and
`capped <owner> <kernel>` for one whose features the CPU has but that the engine's own <NAME>_DISABLE took away (the
engine's test capping itself: no disagreement with the catalogue, and not a feature absent).
Everything here is a function of those files and the catalogue: no tool runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from isaforge import ui
from isaforge.catalogue import REFERENCE, SME_QEMU_PREFIX, Catalogue, CatalogueError
from isaforge.errors import IsaforgeError

MANIFEST_GLOB = "isaforge-kernels-*.json"
# A dependency built inside the project (a Meson subproject, a CMake FetchContent) has its own manifest there: its
# kernels are its own tests' business, not the project's.
FOREIGN_DIRS = ("subprojects", "_deps")
CAP_MODEL = "max"

RAN, FAILED_RAN, REFUSED, WRONGLY_REFUSED, IDLE, NOT_BUILT = "✓", "✗", "·", "!", "-", "not built"
CAPPED = "c"
LEGEND = "\n".join(
    [
        f"{RAN} ran (the tests passed)   {REFUSED} refused (a feature is absent)   {IDLE} runnable, not run (another "
        "kernel was chosen)",
        f"{CAPPED} capped by the engine's own test (<NAME>_DISABLE), its features present",
        f"{FAILED_RAN} ran without a feature it needs   {WRONGLY_REFUSED} refused with all its features present",
        f"caps on {CAP_MODEL}: {RAN} -X ran with X and every feature above it disabled (ISAFORGE_DISABLE; the deepest "
        f"such cap), {REFUSED} refused under every cap",
        "columns: svl N / vl M the streaming / SVE vector length in bytes (sme-/sve-default-vector-length), -X X=off",
    ]
)
# Column titles for QEMU properties, which make long model names (the JSON keeps them whole).
SHORT_PROPERTIES = (("sme-default-vector-length=", "svl "), ("sve-default-vector-length=", "vl "))


# -- manifests ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kernel:
    owner: str
    name: str
    op: str
    variant: str
    requires: frozenset[str]


@dataclass(frozen=True)
class Manifest:
    path: Path
    owner: str
    arch: str
    compiler: str
    kernels: tuple[Kernel, ...]
    dropped: dict[str, str] = field(compare=False)


def _field(raw: dict, key: str, kind: type, path: Path) -> object:
    value = raw.get(key)
    if not isinstance(value, kind):
        raise IsaforgeError(f"{path}: manifest field {key!r} missing or not a {kind.__name__}; rebuild the project")
    return value


def read_manifest(path: Path) -> Manifest:
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise IsaforgeError(f"{path}: not a readable kernel manifest ({exc}); rebuild the project") from None
    if not isinstance(raw, dict):
        raise IsaforgeError(f"{path}: not a kernel manifest (a JSON object); rebuild the project")
    owner = str(_field(raw, "owner", str, path))
    kernels = []
    for entry in _field(raw, "kernels", list, path):  # type: ignore[union-attr]
        if not isinstance(entry, dict):
            raise IsaforgeError(f"{path}: a kernel entry is not an object; rebuild the project")
        requires = _field(entry, "requires", list, path)
        kernels.append(
            Kernel(
                owner,
                str(_field(entry, "name", str, path)),
                str(_field(entry, "op", str, path)),
                str(_field(entry, "variant", str, path)),
                frozenset(str(r) for r in requires),  # type: ignore[union-attr]
            )
        )
    dropped = raw.get("dropped") or {}
    return Manifest(
        path,
        owner,
        str(_field(raw, "arch", str, path)),
        str(_field(raw, "compiler", str, path)),
        tuple(kernels),
        {str(k): str(v) for k, v in dropped.items()} if isinstance(dropped, dict) else {},
    )


def find_manifests(builddir: Path) -> list[Manifest]:
    """Every kernel manifest of a build directory, its dependencies' (subprojects/, _deps/) left out."""
    paths = sorted(
        p
        for p in builddir.rglob(MANIFEST_GLOB)
        if p.is_file() and not set(p.relative_to(builddir).parts[:-1]) & set(FOREIGN_DIRS)
    )
    return [read_manifest(p) for p in paths]


# -- runs and traces ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One run of the test suite: a CPU model, and the features ISAFORGE_DISABLE took away (the cap)."""

    model: str
    disabled: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.model}:disable={','.join(self.disabled)}" if self.disabled else self.model

    @property
    def column(self) -> str:
        """The model as a matrix column: `qemu-sme:max svl 16 vl 32 -sme_fa64`."""
        model, *properties = self.model.split(",")
        words = []
        for prop in properties:
            word = prop
            for long, short in SHORT_PROPERTIES:
                word = word.replace(long, short)
            words.append(f"-{word.removesuffix('=off')}" if word.endswith("=off") else word)
        return " ".join([model, *words])

    @property
    def capped(self) -> bool:
        return bool(self.disabled)


@dataclass(frozen=True)
class Trace:
    ran: frozenset[tuple[str, str]]  # (owner, kernel)
    refused: frozenset[tuple[str, str]]
    capped: frozenset[tuple[str, str]] = frozenset()  # by the engine's own <NAME>_DISABLE, its features present
    chosen: frozenset[tuple[str, str]] = frozenset()  # an engine dispatch's automatic choice for a role


EVENTS = ("ran", "refused", "capped", "chosen")


def parse_trace(text: str) -> Trace:
    """The events of a trace file; lines of other shapes (none are written) are ignored."""
    events: dict[str, set[tuple[str, str]]] = {event: set() for event in EVENTS}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] in events:
            events[words[0]].add((words[1], words[2]))
    return Trace(*(frozenset(events[event]) for event in EVENTS))


def read_trace(path: Path) -> Trace:
    """A run whose programs never dispatched wrote no trace at all: nothing ran."""
    return parse_trace(path.read_text(errors="replace")) if path.is_file() else parse_trace("")


# -- the catalogue's answers ----------------------------------------------------------------------------------------


def cap_order(cat: Catalogue, arch: str) -> list[str]:
    """The arch's features, most advanced first: each one is implied by none of those after it, and among those it
    could be, the latest catalogue bit goes first (sve2 before sve before fp16 before neon)."""
    left = {f.name for f in cat.arch_features(arch)}
    order = []
    while left:
        implied = {g for f in left for g in cat.implied_closure(arch, f) if g != f}
        top = max(left - implied, key=lambda name: cat.features[name].bit)
        order.append(top)
        left.remove(top)
    return order


def cap_walk(cat: Catalogue, arch: str, needed: Iterable[str] | None = None) -> list[Run]:
    """The runs on `max` that walk the caps down to the reference: step k disables the k most advanced of the
    features it has, so
    each lower variant becomes dispatch's choice in turn. With `needed` (the features the build's kernels require),
    a step that leaves the same of them active as the step before (or as `max` uncapped) is left out: dispatch has
    the same choice there, so the run would show nothing new."""
    # Only what the model has: capping a feature it lacks (SME2 on QEMU 10's max) changes nothing.
    have = set(cat.cpu_features(arch, CAP_MODEL))
    order = [name for name in cap_order(cat, arch) if name in have]
    steps = [Run(CAP_MODEL, tuple(order[:k])) for k in range(1, len(order) + 1)]
    if needed is None:
        return steps
    relevant = set(needed)
    seen = active_features(cat, arch, Run(CAP_MODEL)) & relevant
    kept = []
    for step in steps:
        active = active_features(cat, arch, step) & relevant
        if active != seen:
            kept.append(step)
            seen = active
    return kept


# The streaming vector lengths (bytes) every SME kernel is proven at, each with the SVE vector length set apart from
# it (a kernel that reads one for the other shows); FA64 off, as on cores without it (Apple M4).
SVL_SWEEP = (16, 32, 64, 128, 256)


def sme_model(svl: int, vl: int | None = None, model: str = SME_QEMU_PREFIX + "max") -> str:
    """The SME QEMU's `model` at streaming length `svl` (bytes), FA64 off, the SVE length `vl` set apart from it (by
    default 32 at SVL 16, else 16)."""
    vl = vl if vl is not None else 32 if svl == 16 else 16
    return f"{model},sme_fa64=off,sme-default-vector-length={svl},sve-default-vector-length={vl}"


def sme_runs(cat: Catalogue, arch: str, needed: Iterable[str]) -> list[Run]:
    """When the build's kernels need SME: the SME QEMU's models at every SVL of the sweep, and with SME off (the
    negative: no SME kernel may run). None when no kernel needs SME or the arch has no SME QEMU."""
    sme = {f.name for f in cat.arch_features(arch) if "sme" in cat.implied_closure(arch, f.name)}
    if not sme & set(needed):
        return []
    runs = []
    for model in cat.sme_qemu_cpus(arch):
        runs += [Run(sme_model(svl, model=model)) for svl in SVL_SWEEP]
        runs.append(Run(f"{model},sme=off"))
    return runs


def active_features(cat: Catalogue, arch: str, run: Run) -> set[str]:
    """What dispatch may use in a run: the model's features minus the cap, and minus whatever needs a capped one."""
    have = set(cat.cpu_features(arch, run.model))
    return {f for f in have if not cat.implied_closure(arch, f) & set(run.disabled)}


# -- verdicts -------------------------------------------------------------------------------------------------------


@dataclass
class KernelResult:
    kernel: Kernel
    ran: list[Run] = field(default_factory=list)
    refused: list[Run] = field(default_factory=list)
    capped: list[Run] = field(default_factory=list)  # by the engine's own test (<NAME>_DISABLE)
    chosen: list[Run] = field(default_factory=list)  # the automatic choice there (a kernel tuned for a core shows)
    failures: list[str] = field(default_factory=list)
    wrong_runs: list[Run] = field(default_factory=list)  # ran without a feature it needs
    wrong_refusals: list[Run] = field(default_factory=list)  # refused with everything it needs


def _preferred(cat: Catalogue, kernels: Sequence[Kernel]) -> list[Kernel]:
    """Grouped by op (in the manifests' order), most preferred first: the variant's rank, then the manifest's order
    (which follows the engine's `prefer`), the reference last."""
    ops: dict[tuple[str, str], int] = {}
    for k in kernels:
        ops.setdefault((k.owner, k.op), len(ops))

    def rank(k: Kernel) -> int:
        if k.variant == REFERENCE:
            return -1
        try:
            return cat.variant(k.variant).rank  # a catalogue variant or a feature set (fp16+dotprod)
        except CatalogueError:
            return -1  # a manifest of another isaforge version

    position = {k: i for i, k in enumerate(kernels)}
    return sorted(kernels, key=lambda k: (ops[(k.owner, k.op)], -rank(k), position[k]))


def evaluate(
    cat: Catalogue, arch: str, manifests: Sequence[Manifest], runs: Sequence[tuple[Run, Trace]]
) -> list[KernelResult]:
    """Per kernel of the manifests (in their order): where it ran and was refused, and what is wrong with that.

    A refusal where the kernel has all it needs is a disagreement with the catalogue only when nothing in the same
    run explains it: a test may cap itself (the engine's own <NAME>_DISABLE, isf_set_feature_mask), so the kernel
    must not have run in another process of that run, nor a kernel of its op that dispatch prefers to it. A kernel the
    engine's test capped (`capped`) where it has all it needs never ran by the test's choice: no failure."""
    every = [k for m in manifests for k in m.kernels]
    order = _preferred(cat, every)
    results = []
    for kernel in every:
        result = KernelResult(kernel)
        key = (kernel.owner, kernel.name)
        better = {
            (k.owner, k.name) for k in order[: order.index(kernel)] if (k.owner, k.op) == (kernel.owner, kernel.op)
        }
        for run, trace in runs:
            active = active_features(cat, arch, run)
            missing = sorted(kernel.requires - active)
            if key in trace.ran:
                result.ran.append(run)
                if missing:
                    result.wrong_runs.append(run)
                    result.failures.append(f"{kernel.name} ran on {run.label}, which lacks {', '.join(missing)}")
            if key in trace.chosen:
                result.chosen.append(run)
            if key in trace.capped:
                result.capped.append(run)
                if missing:
                    result.failures.append(
                        f"{kernel.name} was capped by the engine on {run.label}, which lacks {', '.join(missing)}: "
                        "dispatch disagrees with the catalogue"
                    )
            if key in trace.refused:
                result.refused.append(run)
                if not missing and key not in trace.ran and not better & trace.ran:
                    result.wrong_refusals.append(run)
                    result.failures.append(
                        f"{kernel.name} was refused on {run.label}, which has all it needs "
                        f"({', '.join(sorted(kernel.requires)) or 'nothing'}): dispatch disagrees with the catalogue"
                    )
        if not result.ran and not result.capped:
            result.failures.insert(
                0,
                f"{kernel.name} never ran in {len(runs)} test run{'s' if len(runs) != 1 else ''}: no test calls its "
                "op, or dispatch never chose it",
            )
        results.append(result)
    return results


# -- the matrix -------------------------------------------------------------------------------------------------------


def _matrix_order(cat: Catalogue, results: Sequence[KernelResult]) -> list[KernelResult]:
    by_kernel = {r.kernel: r for r in results}
    return [by_kernel[k] for k in _preferred(cat, [r.kernel for r in results])]


def _cell(result: KernelResult, run: Run) -> str:
    if run in result.wrong_runs:
        return FAILED_RAN
    if run in result.wrong_refusals:
        return WRONGLY_REFUSED
    if run in result.ran:
        return RAN
    if run in result.capped:
        return CAPPED
    return REFUSED if run in result.refused else IDLE


def _caps_cell(result: KernelResult, caps: Sequence[Run]) -> str:
    ran = [run for run in caps if run in result.ran]
    if ran:
        deepest = max(ran, key=lambda run: len(run.disabled))
        mark = FAILED_RAN if any(run in result.wrong_runs for run in ran) else RAN
        return f"{mark} -{deepest.disabled[-1]}"
    if any(run in result.wrong_refusals for run in caps):
        return WRONGLY_REFUSED
    if any(run in result.capped for run in caps):
        return CAPPED
    return REFUSED if caps and all(run in result.refused for run in caps) else IDLE


def matrix(
    cat: Catalogue, results: Sequence[KernelResult], models: Sequence[Run], caps: Sequence[Run], dropped: dict[str, str]
) -> str:
    """Kernel × CPU model (+ one column for the cap walk on max), and a row per variant that was not built."""
    header = ["kernel", *[run.column for run in models], *([f"caps on {CAP_MODEL}"] if caps else [])]
    rows: list[list[str]] = [header]
    shown: set[tuple[str, str]] = set()
    for result in _matrix_order(cat, results):
        if (result.kernel.owner, result.kernel.name) in shown:
            continue  # a kernel several ops run: one trace, one row
        shown.add((result.kernel.owner, result.kernel.name))
        cells = [_cell(result, run) for run in models]
        rows.append([result.kernel.name, *cells, *([_caps_cell(result, caps)] if caps else [])])
    for variant in sorted(dropped):
        rows.append([f"({variant} kernels)", *[NOT_BUILT for _ in models], *([NOT_BUILT] if caps else [])])
    return ui.text_table(rows, indent="  ")


def summary(name: str, results: Sequence[KernelResult], run_count: int) -> str:
    """Kernels counted once each, however many ops run them (as the JSON lists them)."""
    kernels = {(r.kernel.owner, r.kernel.name) for r in results}
    failing = len({(r.kernel.owner, r.kernel.name) for r in results if r.failures})
    ran = len({(r.kernel.owner, r.kernel.name) for r in results if r.ran})
    verdict = "ok" if not failing else f"{failing} kernel{'s' if failing != 1 else ''} failing"
    return f"{name}: {len(kernels)} kernels, {ran} ran, {verdict} ({run_count} test runs)"


# -- the JSON report ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildReport:
    target: str
    compiler: str
    builddir: Path
    results: tuple[KernelResult, ...]
    error: str = ""  # why the build has no coverage (its tests failed, it did not build)
    dropped: dict[str, str] = field(default_factory=dict, compare=False)  # variants not built, and why
    step: str = ""  # with `error`: the step that failed (libisaforge, configure, build, manifest, tests)

    @property
    def passed(self) -> bool:
        return not self.error and not any(r.failures for r in self.results)


def _unique(labels: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(labels))


def report(builds: Sequence[BuildReport]) -> dict:
    """`{"builds": [...], "kernels": {"<kernel>@<triple>-<compiler>": {...}}}`; every build says whether it `passed`,
    a build that failed at a step says which (`step`) and why (`error`), one that left variants out says which
    (`dropped`). The same kernel name of two owners in one build is told apart by an `<owner>:` prefix; one kernel
    that several ops of an owner run is one entry (`op` the first, `ops` all: the trace names kernels, not ops)."""
    kernels: dict[str, dict] = {}
    for b in builds:
        owners: dict[str, set[str]] = {}
        for r in b.results:
            owners.setdefault(r.kernel.name, set()).add(r.kernel.owner)
        for r in b.results:
            name = r.kernel.name if len(owners[r.kernel.name]) == 1 else f"{r.kernel.owner}:{r.kernel.name}"
            key = f"{name}@{b.target}-{b.compiler}"
            if key in kernels:  # one kernel that several ops run (libisaforge's quantized ops): one trace, one entry
                kernels[key]["ops"].append(r.kernel.op)
                continue
            kernels[key] = {
                "target": b.target,
                "compiler": b.compiler,
                "owner": r.kernel.owner,
                "op": r.kernel.op,
                "ops": [r.kernel.op],
                "variant": r.kernel.variant,
                "requires": sorted(r.kernel.requires),
                "ran": _unique(run.label for run in r.ran),
                "refused": _unique(run.label for run in r.refused),
                "capped": _unique(run.label for run in r.capped),
                "chosen": _unique(run.label for run in r.chosen),
                "failures": r.failures,
            }
    return {
        "builds": [
            {
                "target": b.target,
                "compiler": b.compiler,
                "builddir": str(b.builddir),
                "passed": b.passed,
                **({"step": b.step, "error": b.error} if b.error else {}),
                **({"dropped": b.dropped} if b.dropped else {}),
            }
            for b in builds
        ],
        "kernels": kernels,
    }
