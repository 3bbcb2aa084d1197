"""The CI matrix of ci/matrix.toml: list its cells, run them here, or write the GitHub workflow made from it.

`list` shows each cell (target × compiler × build type) with its QEMU CPU models; `run` builds and tests the
selected cells (JUnit XML and a pytest log per cell under build/matrix/<cell>/, a live progress line, and a closing
summary per cell × CPU model), here or, with --docker, each in a container of the CI image (results under
build/in-docker/matrix/<cell>/); `github` writes .github/workflows/cross.yml: the image built once, then one job per
cell running this same runner in it.

--only EXPR selects: space-separated conditions, all of which must hold; each is `key=v1,v2` (any of the values;
globs allowed) with key one of cell, target, compiler, build, toolchain, cpu, or a bare cell name. `cpu=` also
narrows the CPU models of the chosen cells (the host cell, which has none, drops out). Examples:
  --only host-gcc-release
  --only 'compiler=clang build=debug-ubsan'
  --only 'target=arm-* cpu=max'
"""

from __future__ import annotations

import argparse
import json

from isaforge import ciimage, ui
from isaforge.errors import IsaforgeError
from isaforge.matrix import github, plan, report
from isaforge.matrix import run as runner
from isaforge.matrix.definition import RESULTS_DIR, load_matrix
from isaforge.matrix.results import NATIVE
from isaforge.source_tree import repo_root

ONLY_HELP = "select cells: 'key=v1,v2 …' with key cell|target|compiler|build|toolchain|cpu, or a cell name (repeatable)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("list", help="the cells of ci/matrix.toml and the CPU models each runs its tests on")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.add_argument("--only", action="append", default=[], metavar="EXPR", help=ONLY_HELP)
    p.set_defaults(_action=_list)
    p = sub.add_parser("run", help="build and test the cells here; JUnit XML per cell and a summary table")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="cells run at the same time (default 1)")
    p.add_argument("--only", action="append", default=[], metavar="EXPR", help=ONLY_HELP)
    p.add_argument(
        "--allow-unavailable",
        action="store_true",
        help="a cell whose toolchain is missing here does not fail the run (it is still listed as unavailable)",
    )
    p.add_argument(
        "--docker",
        nargs="?",
        const=ciimage.IMAGE,
        metavar="IMAGE",
        help=f"run each cell in a container of the CI image (default {ciimage.IMAGE}): offline, as the checkout's "
        f"owner, its builds in {runner.DOCKER_BUILD}/",
    )
    p.add_argument(
        "--results-dir",
        metavar="DIR",
        help=f"where each cell's junit.xml and pytest.log go, under DIR/<cell>/ (default {RESULTS_DIR}; "
        f"{runner.DOCKER_RESULTS} with --docker)",
    )
    p.set_defaults(_action=_run)
    p = sub.add_parser("github", help=f"write {github.WORKFLOW_FILE} from the matrix")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the workflow is out of date")
    p.set_defaults(_action=_github)


def run(args: argparse.Namespace) -> int:
    return int(args._action(args))


def _list(args: argparse.Namespace) -> int:
    cells = plan.select(load_matrix(), args.only)
    if args.json:
        rows = [
            {
                "name": c.name,
                "target": c.target,
                "arch": c.arch,
                "compiler": c.compiler,
                "build": c.build_type.name,
                "meson_options": c.meson_options(),
                "build_dir": f"build/{c.build().name}",
                "cpus": list(c.cpus),
                "tests": list(c.tests),
            }
            for c in cells
        ]
        print(json.dumps(rows, indent=2))
        return 0
    table = [["cell", "build dir", "cpus"]]
    table += [[c.name, f"build/{c.build().name}", ", ".join(c.cpus) or NATIVE] for c in cells]
    print(ui.text_table(table))
    return 0


def _run(args: argparse.Namespace) -> int:
    root = repo_root()
    cells = plan.select(load_matrix(root), args.only)
    results_dir = args.results_dir or str(RESULTS_DIR if args.docker is None else runner.DOCKER_RESULTS)
    if args.docker is not None and (problem := runner.image_problem(args.docker)) is not None:
        raise IsaforgeError(problem)
    result = runner.run_matrix(
        cells, jobs=args.jobs, allow_unavailable=args.allow_unavailable, out_dir=root / results_dir, image=args.docker
    )
    print()
    print(report.summary_table(result))
    print()
    print(report.closing_line(result))
    print(f"JUnit XML and pytest logs: {results_dir}/<cell>/")
    if args.docker is not None:
        print(f"each container's output: {results_dir}/<cell>.docker.log")
    return 0 if result.ok else 1


def _github(args: argparse.Namespace) -> int:
    root = repo_root()
    path = root / github.WORKFLOW_FILE
    text = github.render_workflow(load_matrix(root))
    current = path.read_text() if path.is_file() else None
    if args.check:
        if current == text:
            print(f"isaforge: {github.WORKFLOW_FILE} is up to date")
            return 0
        print(f"out of date: {github.WORKFLOW_FILE}")
        print("isaforge: run `isaforge matrix github` to regenerate it")
        return 1
    if current == text:
        print(f"isaforge: {github.WORKFLOW_FILE} is up to date")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {github.WORKFLOW_FILE}")
    return 0
