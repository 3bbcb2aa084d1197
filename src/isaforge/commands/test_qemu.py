"""Prove a project's kernels under QEMU: build it per toolchain, run its tests on every CPU model and cap, print the
kernel × CPU-model coverage.

For each usable target × compiler: libisaforge is built and installed for it (unless the project is libisaforge),
the project (Meson or CMake, found by its top-level file) is configured with isaforge's cross file or CMake
toolchain file and built under <project>/build-isaforge/<triple>-<compiler>; its own test suite then runs once per
CPU model of the arch (QEMU_CPU), and on `max` once per step of the cap walk (ISAFORGE_DISABLE taking away the most
advanced remaining feature, down to the reference), each run with ISAFORGE_TRACE recording which kernels ran and
which dispatch refused. The kernels are those the build's manifests (isaforge-kernels-<owner>.json) list. Fails
(exit 1) when a test run fails, a built kernel never ran, a kernel ran on a model (or under a cap) without one of its
features, or dispatch refused a kernel whose features were all there (and nothing else in that run ran it or an op
kernel dispatch prefers to it). A build that fails (libisaforge, configure, build or a test run) is reported with the
step and its one-line reason, and the next build goes on; the JSON report is written whatever happens.

When every engine catalogue of the project (a TOML file with an [engine] table) declares `arches`, only those arches'
toolchains are built.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from isaforge import builds, coverage, projects, qemu, ui
from isaforge.catalogue import SME_QEMU_PREFIX, Arch, Catalogue, CpuSpec, load
from isaforge.errors import IsaforgeError
from isaforge.toolchains.model import Toolchain, toolchains
from isaforge.toolchains.probing import probe

BUILDDIR = "build-isaforge"
# The steps of one build, as a failed build's report names them.
LIBISAFORGE, CONFIGURE, BUILD, MANIFEST, TESTS = "libisaforge", "configure", "build", "manifest", "tests"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", required=True, type=Path, help="the project's folder (meson.build or CMakeLists.txt)"
    )
    parser.add_argument(
        "--targets", action="append", default=[], help="comma-separated triples or arches (repeatable; default: all)"
    )
    parser.add_argument(
        "--compilers",
        action="append",
        default=[],
        help="comma-separated compilers, gcc or clang (repeatable; default: both)",
    )
    parser.add_argument(
        "--toolchains",
        action="append",
        default=[],
        help="comma-separated <triple>-<compiler> names (repeatable; default: every target × compiler)",
    )
    parser.add_argument(
        "--qemu-cpu",
        action="append",
        default=[],
        help="comma-separated CPU models, QEMU properties after theirs (repeatable; default: every model of each "
        "arch; qemu-sme:max,sme-default-vector-length=64 runs under the SME2-capable QEMU); on max the cap walk runs, "
        "and the SVL sweep under the SME QEMU when a kernel needs SME",
    )
    parser.add_argument("--json", type=Path, help="write the coverage report to this file")
    parser.add_argument("--buildtype", choices=list(projects.BUILD_TYPES), default=projects.DEFAULT_BUILD_TYPE,
                        help="Meson's build type (CMake: the matching CMAKE_BUILD_TYPE); default: release")  # fmt: skip
    parser.add_argument("-D", "--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for meson setup or cmake, as -DKEY=VALUE (repeatable)")  # fmt: skip
    parser.add_argument("--builddir-root", type=Path,
                        help=f"where the build directories go (default: <project>/{BUILDDIR})")  # fmt: skip


def _split(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _split_models(values: list[str]) -> list[str]:
    """Comma-separated models, QEMU properties kept with theirs: `cortex-a53,qemu-sme:max,sme=off` is two."""
    models: list[str] = []
    for part in _split(values):
        if "=" in part and models:
            models[-1] += f",{part}"
        else:
            models.append(part)
    return models


def _declared(cat: Catalogue, declared: dict[Path, list[str]] | None) -> set[str] | None:
    """The arches (catalogue names) the engine catalogues declare; None: every arch."""
    if declared is None:
        return None
    out: set[str] = set()
    for path, arches in declared.items():
        for name in arches:
            try:
                out.add(cat.arch_by_triple(name).name)
            except IsaforgeError:
                known = ", ".join(cat.arches)
                raise IsaforgeError(f"{_shown(path)}: [engine] arches names {name!r}; choose from: {known}") from None
    return out


def selected_toolchains(
    cat: Catalogue, args: argparse.Namespace, declared: dict[Path, list[str]] | None = None
) -> list[Toolchain]:
    """Catalogue order, filtered, and kept to the arches the engine catalogues declare (`declared`, from
    projects.declared_arches); an unknown name, or a target of an arch no catalogue declares, is a one-line error."""
    targets = {cat.arch_by_triple(t).triple for t in _split(args.targets)}
    compilers = {cat.compiler(c).name for c in _split(args.compilers)}
    every = toolchains(cat)
    names = _split(args.toolchains)
    unknown = [n for n in names if n not in {tc.name for tc in every}]
    if unknown:
        raise IsaforgeError(f"unknown toolchain {unknown[0]!r}; choose from: {', '.join(tc.name for tc in every)}")
    arches = _declared(cat, declared)
    if arches is not None:
        asked = [(t, "--targets") for t in sorted(targets)]
        asked += [(tc.triple, "--toolchains") for tc in every if tc.name in names]
        for triple, option in asked:
            arch = cat.arch_by_triple(triple).name
            if arch not in arches:
                files = ", ".join(sorted({_shown(p) for p in declared or {}}))
                raise IsaforgeError(
                    f"{option} names {triple}, but the engine's catalogue ({files}) declares arches = "
                    f"{sorted(arches)}; leave {arch} out, or add it to [engine] arches"
                )
    return [
        tc
        for tc in every
        if (not targets or tc.triple in targets)
        and (not compilers or tc.compiler.name in compilers)
        and (not names or tc.name in names)
        and (arches is None or tc.arch.name in arches)
    ]


def build_options(values: list[str]) -> tuple[str, ...]:
    """-D KEY=VALUE options as given; one without a key or `=` is a one-line error."""
    for value in values:
        if not re.fullmatch(r"[^=\s]+=.*", value, re.DOTALL):
            raise IsaforgeError(
                f"-D {value!r} is not KEY=VALUE; give a build option as -D KEY=VALUE (e.g. -D b_lto=true)"
            )
    return tuple(values)


def selected_models(cat: Catalogue, wanted: list[str]) -> dict[str, list[str]]:
    """The models per arch: the catalogue's, or those asked for (also `qemu-sme:<model>[,properties]`)."""
    known = {cpu for models in cat.cpus.values() for cpu in models}
    unknown = [cpu for cpu in wanted if cpu not in known and not cpu.startswith(SME_QEMU_PREFIX)]
    if unknown:
        raise IsaforgeError(f"unknown CPU model {unknown[0]!r}; choose from: {', '.join(sorted(known))}")
    out = {}
    for arch, models in cat.cpus.items():
        out[arch] = [c for c in models if not wanted or c in wanted]
        for spec in (w for w in wanted if w.startswith(SME_QEMU_PREFIX) and cat.sme_qemu_cpus(arch)):
            cat.cpu_features(arch, spec)  # an unknown SME model: one line naming the valid ones
            out[arch].append(spec)
    return out


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_files(logs: Path, run: coverage.Run) -> tuple[Path, Path]:
    """The trace file and the log of one test run."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", run.label)
    return logs / f"trace-{slug}.txt", logs / f"test-{slug}.log"


def run_env(run: coverage.Run, trace: Path, owners: list[str], arch: Arch) -> dict[str, str]:
    """The environment of one test run: the model, the cap and the trace file; nothing of the caller's caps (its own
    ISAFORGE_DISABLE or an engine's <NAME>_DISABLE) leaks in. A `qemu-sme:` model puts the SME QEMU first on PATH,
    where the build's exe_wrapper (QEMU by its bare name) finds it."""
    caps = {f"{owner.upper()}_DISABLE" for owner in owners}
    env = {k: v for k, v in projects.tool_env().items() if k not in caps}
    spec = CpuSpec.parse(run.model)
    env.update({"QEMU_CPU": spec.qemu_cpu, "ISAFORGE_TRACE": str(trace)})
    if spec.sme_qemu:
        env["PATH"] = f"{qemu.sme_binary(arch).parent}{os.pathsep}{env.get('PATH', os.defpath)}"
    if run.disabled:
        env["ISAFORGE_DISABLE"] = ",".join(run.disabled)
    return env


@dataclass(frozen=True)
class Settings:
    """What every build of one test-qemu run shares."""

    project: projects.Project
    root: Path
    buildtype: str = projects.DEFAULT_BUILD_TYPE
    options: tuple[str, ...] = ()


def prove(
    cat: Catalogue, settings: Settings, tc: Toolchain, models: list[str], status: ui.StatusLine
) -> tuple[coverage.BuildReport, list[coverage.Run], list[coverage.Run]]:
    """Build one toolchain's project and run its tests on every run; the report, with the step that failed and why
    when one did (then without coverage)."""
    step = LIBISAFORGE
    directory = settings.root / tc.name
    try:
        prefix = None
        if not settings.project.is_isaforge:
            status.step(tc.name, step)
            prefix = builds.ensure_installed(builds.build_for(tc.triple, tc.compiler.name))
        pb = projects.ProjectBuild(settings.project, tc, directory, prefix, settings.buildtype, settings.options)
        for step, action in ((CONFIGURE, projects.configure), (BUILD, projects.compile_project)):
            status.step(tc.name, step)
            action(pb)
        step = MANIFEST
        manifests = coverage.find_manifests(pb.directory)
        if not manifests:
            raise IsaforgeError(
                f"{_shown(pb.directory)}: the build wrote no kernel manifest ({coverage.MANIFEST_GLOB}); build the "
                "kernels with isaforge's generator (docs/engines.md)"
            )
        step = TESTS
        return _run_tests(cat, pb, manifests, models, status)
    except IsaforgeError as exc:
        return coverage.BuildReport(tc.triple, tc.compiler.name, directory, (), str(exc), step=step), [], []


def _run_tests(
    cat: Catalogue,
    pb: projects.ProjectBuild,
    manifests: list[coverage.Manifest],
    models: list[str],
    status: ui.StatusLine,
) -> tuple[coverage.BuildReport, list[coverage.Run], list[coverage.Run]]:
    """The test suite on every model and cap; the report (with `error` when a run failed)."""
    tc = pb.toolchain
    models_runs = [coverage.Run(m) for m in models]
    needed = {f for m in manifests for k in m.kernels for f in k.requires}
    caps = coverage.cap_walk(cat, tc.arch.name, needed) if coverage.CAP_MODEL in models else []
    if coverage.CAP_MODEL in models and not any(m.startswith(SME_QEMU_PREFIX) for m in models):
        models_runs += [r for r in coverage.sme_runs(cat, tc.arch.name, needed) if r not in models_runs]
    owners = [m.owner for m in manifests]
    observed: list[tuple[coverage.Run, coverage.Trace]] = []
    pb.logs.mkdir(parents=True, exist_ok=True)
    error = ""
    for run in [*models_runs, *caps]:
        status.step(tc.name, f"tests on {run.label}")
        trace, log = run_files(pb.logs, run)
        trace.unlink(missing_ok=True)
        code = projects.run_tests(pb, run_env(run, trace, owners, tc.arch), log)
        if code != 0:
            cap = f" (ISAFORGE_DISABLE={','.join(run.disabled)})" if run.disabled else ""
            error = f"the tests failed on {run.model}{cap}: exit status {code}; full output in {_shown(log)}"
            break
        observed.append((run, coverage.read_trace(trace)))
    results = () if error else tuple(coverage.evaluate(cat, tc.arch.name, manifests, observed))
    dropped = {v: r for m in manifests for v, r in m.dropped.items()}
    step = TESTS if error else ""
    report = coverage.BuildReport(tc.triple, tc.compiler.name, pb.directory, results, error, dropped, step)
    return report, models_runs, caps


def run(args: argparse.Namespace) -> int:
    reports: list[coverage.BuildReport] = []
    try:
        return _run(args, reports)
    finally:
        # Also when a build failed or an error ended the run: what was done, and why it stopped.
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(coverage.report(reports), indent=2) + "\n")


def _run(args: argparse.Namespace, reports: list[coverage.BuildReport]) -> int:
    project = projects.detect(args.project)
    cat = load()
    root = (args.builddir_root or project.directory / BUILDDIR).resolve()
    settings = Settings(project, root, args.buildtype, build_options(args.options))
    # libisaforge's own tree has the examples' catalogues in it, and builds for every arch whatever they declare.
    declared = None if project.is_isaforge else projects.declared_arches(project.directory, root)
    todo = selected_toolchains(cat, args, declared)
    models = selected_models(cat, _split_models(args.qemu_cpu))
    if not todo:
        raise IsaforgeError("no toolchain matches --targets / --compilers / --toolchains")
    started = time.monotonic()
    status = ui.StatusLine()
    failures = 0
    try:
        for tc in todo:
            found = probe(tc)
            if not found.usable:
                print(f"{tc.name}: skipped: {'; '.join(found.reasons)}")
                continue
            if not models[tc.arch.name]:
                print(f"{tc.name}: skipped: no selected CPU model of {tc.arch.name} (--qemu-cpu)")
                continue
            report, model_runs, caps = prove(cat, settings, tc, models[tc.arch.name], status)
            reports.append(report)
            if report.step == MANIFEST:  # the project builds no kernels with isaforge: no other build will
                raise IsaforgeError(report.error)
            done = (
                f"{report.step} failed"
                if report.step not in ("", TESTS)
                else f"{len(model_runs) + len(caps)} test runs done"
            )
            status.finish(tc.name, f"{tc.name}: {done}")
            failures += _print_build(cat, report, model_runs, caps)
    finally:
        status.close()
    if not reports:
        raise IsaforgeError("no usable toolchain; run ci/install-toolchains.sh (or `isaforge toolchain list`)")
    print(coverage.LEGEND)
    took = ui.duration(time.monotonic() - started)
    verdict = "proven" if not failures else f"FAILED ({failures} failure{'s' if failures != 1 else ''})"
    plural = "s" if len(reports) != 1 else ""
    print(f"test-qemu: {project.directory.name}: {len(reports)} build{plural}, {verdict} in {took}")
    return 1 if failures else 0


def _print_build(
    cat: Catalogue,
    report: coverage.BuildReport,
    model_runs: list[coverage.Run],
    caps: list[coverage.Run],
) -> int:
    """The build's matrix and failures; the number of failures."""
    name = f"{report.target}-{report.compiler}"
    print(f"{name}: {_shown(report.builddir)}")
    if report.error:
        print(f"  FAIL {report.error}" if report.step == TESTS else f"  FAIL {report.step}: {report.error}")
        print(f"{name}: coverage not evaluated")
        return 1
    print(coverage.matrix(cat, report.results, model_runs, caps, report.dropped))
    for variant, reason in sorted(report.dropped.items()):
        print(f"  not built: {variant}: {reason}")
    failing = [f for r in report.results for f in r.failures]
    for failure in failing:
        print(f"  FAIL {failure}")
    for result in report.results:
        if result.capped and not result.ran and not result.failures:
            print(f"  capped: {result.kernel.name} never ran: the engine's own test capped it wherever it could run")
    print(coverage.summary(name, report.results, len(model_runs) + len(caps)))
    return len(failing)
