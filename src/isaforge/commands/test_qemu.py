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
kernel dispatch prefers to it).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from isaforge import builds, coverage, projects, ui
from isaforge.catalogue import Catalogue, load
from isaforge.errors import IsaforgeError
from isaforge.toolchains import Toolchain, probe, toolchains

BUILDDIR = "build-isaforge"


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
        help="comma-separated CPU models (repeatable; default: every model of each arch); the cap walk "
        "runs when max is among them",
    )
    parser.add_argument("--json", type=Path, help="write the coverage report to this file")
    parser.add_argument("--builddir-root", type=Path,
                        help=f"where the build directories go (default: <project>/{BUILDDIR})")  # fmt: skip


def _split(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def selected_toolchains(cat: Catalogue, args: argparse.Namespace) -> list[Toolchain]:
    """Catalogue order, filtered; an unknown name is a one-line error naming the known ones."""
    targets = {cat.arch_by_triple(t).triple for t in _split(args.targets)}
    compilers = {cat.compiler(c).name for c in _split(args.compilers)}
    every = toolchains(cat)
    names = _split(args.toolchains)
    unknown = [n for n in names if n not in {tc.name for tc in every}]
    if unknown:
        raise IsaforgeError(f"unknown toolchain {unknown[0]!r}; choose from: {', '.join(tc.name for tc in every)}")
    return [
        tc
        for tc in every
        if (not targets or tc.triple in targets)
        and (not compilers or tc.compiler.name in compilers)
        and (not names or tc.name in names)
    ]


def selected_models(cat: Catalogue, wanted: list[str]) -> dict[str, list[str]]:
    known = {cpu for models in cat.cpus.values() for cpu in models}
    unknown = [cpu for cpu in wanted if cpu not in known]
    if unknown:
        raise IsaforgeError(f"unknown CPU model {unknown[0]!r}; choose from: {', '.join(sorted(known))}")
    return {arch: [c for c in models if not wanted or c in wanted] for arch, models in cat.cpus.items()}


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_files(logs: Path, run: coverage.Run) -> tuple[Path, Path]:
    """The trace file and the log of one test run."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", run.label)
    return logs / f"trace-{slug}.txt", logs / f"test-{slug}.log"


def run_env(run: coverage.Run, trace: Path, owners: list[str]) -> dict[str, str]:
    """The environment of one test run: the model, the cap and the trace file; nothing of the caller's caps (its own
    ISAFORGE_DISABLE or an engine's <NAME>_DISABLE) leaks in."""
    caps = {f"{owner.upper()}_DISABLE" for owner in owners}
    env = {k: v for k, v in projects.tool_env().items() if k not in caps}
    env.update({"QEMU_CPU": run.model, "ISAFORGE_TRACE": str(trace)})
    if run.disabled:
        env["ISAFORGE_DISABLE"] = ",".join(run.disabled)
    return env


def prove(
    cat: Catalogue, project: projects.Project, tc: Toolchain, models: list[str], root: Path, status: ui.StatusLine
) -> tuple[coverage.BuildReport, list[coverage.Run], list[coverage.Run]]:
    """Build one toolchain's project and run its tests on every run; the report (with `error` when a run failed)."""
    prefix = None
    if not project.is_isaforge:
        status.step(tc.name, "libisaforge")
        prefix = builds.ensure_installed(builds.build_for(tc.triple, tc.compiler.name))
    pb = projects.ProjectBuild(project, tc, root / tc.name, prefix)
    status.step(tc.name, "configure")
    projects.configure(pb)
    status.step(tc.name, "build")
    projects.compile_project(pb)
    manifests = coverage.find_manifests(pb.directory)
    if not manifests:
        raise IsaforgeError(
            f"{_shown(pb.directory)}: the build wrote no kernel manifest ({coverage.MANIFEST_GLOB}); build the "
            "kernels with isaforge's generator (docs/engines.md)"
        )
    models_runs = [coverage.Run(m) for m in models]
    needed = {f for m in manifests for k in m.kernels for f in k.requires}
    caps = coverage.cap_walk(cat, tc.arch.name, needed) if coverage.CAP_MODEL in models else []
    owners = [m.owner for m in manifests]
    observed: list[tuple[coverage.Run, coverage.Trace]] = []
    pb.logs.mkdir(parents=True, exist_ok=True)
    error = ""
    for run in [*models_runs, *caps]:
        status.step(tc.name, f"tests on {run.label}")
        trace, log = run_files(pb.logs, run)
        trace.unlink(missing_ok=True)
        code = projects.run_tests(pb, run_env(run, trace, owners), log)
        if code != 0:
            cap = f" (ISAFORGE_DISABLE={','.join(run.disabled)})" if run.disabled else ""
            error = f"the tests failed on {run.model}{cap}: exit status {code}; full output in {_shown(log)}"
            break
        observed.append((run, coverage.read_trace(trace)))
    results = () if error else tuple(coverage.evaluate(cat, tc.arch.name, manifests, observed))
    dropped = {v: r for m in manifests for v, r in m.dropped.items()}
    report = coverage.BuildReport(tc.triple, tc.compiler.name, pb.directory, results, error, dropped)
    return report, models_runs, caps


def run(args: argparse.Namespace) -> int:
    project = projects.detect(args.project)
    cat = load()
    todo = selected_toolchains(cat, args)
    models = selected_models(cat, _split(args.qemu_cpu))
    root = (args.builddir_root or project.directory / BUILDDIR).resolve()
    if not todo:
        raise IsaforgeError("no toolchain matches --targets / --compilers / --toolchains")
    started = time.monotonic()
    status = ui.StatusLine()
    reports: list[coverage.BuildReport] = []
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
            report, model_runs, caps = prove(cat, project, tc, models[tc.arch.name], root, status)
            status.finish(tc.name, f"{tc.name}: {len(model_runs) + len(caps)} test runs done")
            reports.append(report)
            failures += _print_build(cat, report, model_runs, caps)
    finally:
        status.close()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(coverage.report(reports), indent=2) + "\n")
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
        print(f"  FAIL {report.error}")
        print(f"{name}: coverage not evaluated")
        return 1
    print(coverage.matrix(cat, report.results, model_runs, caps, report.dropped))
    for variant, reason in sorted(report.dropped.items()):
        print(f"  not built: {variant}: {reason}")
    failing = [f for r in report.results for f in r.failures]
    for failure in failing:
        print(f"  FAIL {failure}")
    print(coverage.summary(name, report.results, len(model_runs) + len(caps)))
    return len(failing)
