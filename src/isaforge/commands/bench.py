"""Model the micro-kernels' hot loops with llvm-mca and count a GEMM's executed instructions under QEMU.

Builds libisaforge for aarch64-linux-gnu with the chosen compilers (clang by default), then (1) times every
micro-kernel's hot loop on Neoverse N1/N2/V1/V2 scheduling models against the peak of its MAC instruction, and
(2) runs one GEMM per op, variant and shape under qemu-aarch64 and counts the instructions executed inside
libisaforge, and (3) counts plan runs (isf_gemm_run alone, the weights packed at create): with and without a fused
bias and clamp (--epilogue-shape), and at small M (--plan-shapes), next to the plain API's figures of an earlier
run (--before), and (4) when a streaming (SME) kernel is built, one plan run of it per shape and streaming vector
length under the SME QEMU beside the best non-SME kernel (--svl, --sme-shapes, --no-sme). Prints a markdown report
(or writes it with --markdown), checks the performance goals, and can write the figures as JSON (--json) and a bar
chart (--plot). Only aarch64 is benchmarked.

With --project DIR, an engine's kernels instead: the project is built for aarch64 as `isaforge test-qemu` builds it,
and every kernel its manifests declare has its hot loop priced on every core, as libisaforge's are.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from isaforge import ui
from isaforge.bench import require
from isaforge.bench.measure.mca import cores, llvm_mca, objcode
from isaforge.bench.report import engine as engine_report
from isaforge.bench.scenarios import engine
from isaforge.catalogue import REFERENCE, load
from isaforge.errors import IsaforgeError

try:  # numpy (job files) is an optional dependency: without it, `run` says in one line how to get it
    from isaforge.bench.measure import executable, wholecall
    from isaforge.bench.measure.qemu_count import PLAN, PLAN_EPILOGUE
    from isaforge.bench.report import figures, goals, libisaforge, plans, results
    from isaforge.bench.report import sidebyside as peer_report
    from isaforge.bench.scenarios import libisaforge as libisaforge_runs
    from isaforge.bench.scenarios import shapes, sidebyside, sme
    from isaforge.bench.scenarios.shapes import Shape
except ImportError as exc:  # pragma: no cover - depends on the environment
    MISSING: str | None = exc.name
else:
    MISSING = None

ARCH = "aarch64"
DEFAULT_SHAPES = "64x64x64,128x128x128,256x256x64"
DEFAULT_CORES = ",".join(cores.CORES)
# as bench.plans has them; spelled out so --help works without numpy
DEFAULT_PLAN_SHAPES = "1x1024x1024,49x256x2304"
DEFAULT_EPILOGUE_SHAPE = "256x256x64"
# as bench.sidebyside has them
DEFAULT_PEER_SHAPES = "1x1024x1024,4x1024x1024,49x256x2304,64x64x64,128x128x128,256x256x64,384x384x384"
DEFAULT_PEER_CORES = "cortex-a55,neoverse-n1,neoverse-n2,neoverse-v1,max"
DEFAULT_PRECISIONS = "fp32,fp16,bf16,int8,qs8,qd8,qc4w"
# as bench.scenarios.sme has them
DEFAULT_SME_SHAPES = "256x256x256,1x1024x1024"
DEFAULT_SVL = "16,32,64"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        type=Path,
        help="an engine's folder (meson.build or CMakeLists.txt): price its kernels' hot loops per core instead of "
        "libisaforge's (--compiler, --cores, --markdown, --json and --jobs apply)",
    )
    parser.add_argument("--compiler", default="clang", help="clang, gcc or both, comma-separated (default: clang)")
    parser.add_argument(
        "--cores", default=DEFAULT_CORES, help=f"llvm-mca cores, comma-separated (default: {DEFAULT_CORES})"
    )
    parser.add_argument("--ops", default="", help="ops, comma-separated, e.g. gemm_f32,s8 (default: all)")
    parser.add_argument("--variants", default="", help="variants, comma-separated (default: all but ref)")
    parser.add_argument(
        "--shapes", default=DEFAULT_SHAPES, help=f"GEMM shapes MxNxK for QEMU (default: {DEFAULT_SHAPES})"
    )
    parser.add_argument("--sve-bits", type=int, default=128, help="SVE vector length under QEMU (default: 128)")
    parser.add_argument("--no-qemu", action="store_true", help="skip the executed-instruction counts")
    parser.add_argument("--no-mca", action="store_true", help="skip the llvm-mca models")
    parser.add_argument(
        "--plan-shapes",
        default=DEFAULT_PLAN_SHAPES,
        help=f"MxNxK of the small-M plan runs, goals at 1x1024x1024 and 49x256x2304 (default: {DEFAULT_PLAN_SHAPES})",
    )
    parser.add_argument(
        "--epilogue-shape",
        default=DEFAULT_EPILOGUE_SHAPE,
        help=f"MxNxK of the plan runs with and without fused bias + clamp (default: {DEFAULT_EPILOGUE_SHAPE})",
    )
    parser.add_argument("--no-plans", action="store_true", help="skip the plan runs (the Plans section)")
    parser.add_argument(
        "--no-decode",
        action="store_true",
        help="skip the quantized section's m=1 int4-vs-int8 decoding runs on Neoverse V1 (the slowest QEMU runs)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="JSON of an earlier run (--json) whose plain-API figures at the plan shapes the report shows as before",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also run libisaforge side by side with OpenBLAS, BLIS and XNNPACK: whole calls in modeled cycles "
        "(their arm64 packages: bash ci/install-toolchains.sh --peers)",
    )
    parser.add_argument(
        "--peer-shapes", default=DEFAULT_PEER_SHAPES, help=f"MxNxK of the side-by-side (default: {DEFAULT_PEER_SHAPES})"
    )
    parser.add_argument(
        "--peer-cores",
        default=DEFAULT_PEER_CORES,
        help=f"QEMU CPU models the side-by-side runs and prices on (default: {DEFAULT_PEER_CORES})",
    )
    parser.add_argument(
        "--precisions",
        default=DEFAULT_PRECISIONS,
        help="side-by-side precisions; int8 is libisaforge's int32 output (gemm_s8), qs8 requantized int8 output "
        "(a gemm_qs8 plan) beside XNNPACK's qs8 operator, qd8 and qc4w dynamically quantized fp32 A with int8 or "
        f"int4 weights (gemm_qd8_f32, gemm_qd8_f32_qc4w plans; XNNPACK's qs8 call stands in) "
        f"(default: {DEFAULT_PRECISIONS})",
    )
    parser.add_argument(
        "--sme-shapes",
        default=DEFAULT_SME_SHAPES,
        help=f"MxNxK of the SME section's plan runs, made when a streaming kernel is built (default: "
        f"{DEFAULT_SME_SHAPES})",
    )
    parser.add_argument(
        "--svl",
        default=DEFAULT_SVL,
        help=f"streaming vector lengths of the SME section, bytes, comma-separated (default: {DEFAULT_SVL})",
    )
    parser.add_argument("--no-sme", action="store_true", help="skip the SME section (the streaming kernels' runs)")
    parser.add_argument("--markdown", type=Path, help="write the markdown report here instead of stdout")
    parser.add_argument("--json", type=Path, help="also write every figure as JSON here")
    parser.add_argument(
        "--plot",
        type=Path,
        help="also draw %% of peak per kernel and core as a PNG here (with --peers: the side by side here, the "
        "hot loops beside it as <name>-hot-loops.png)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel tool runs (default: CPUs)")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _choose(kind: str, wanted: list[str], valid: list[str]) -> list[str]:
    for w in wanted:
        if w not in valid:
            raise IsaforgeError(f"unknown {kind} {w!r}; choose from: {', '.join(valid)}")
    return wanted


def _ops(text: str) -> list[str]:
    """Op names, `gemm_` optional: `f32,gemm_s8`."""
    valid = list(load().ops)  # the plan-only ops (quantized, gemm_s4) through bench.qplans
    return _choose("op", [o if o in valid or f"gemm_{o}" not in valid else f"gemm_{o}" for o in _split(text)], valid)


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this run: `isaforge bench` and the options that differ from the defaults."""
    parts = ["isaforge", "bench"]
    defaults = {"compiler": "clang", "cores": DEFAULT_CORES, "ops": "", "variants": "", "shapes": DEFAULT_SHAPES,
                "sve_bits": 128, "plan_shapes": DEFAULT_PLAN_SHAPES,
                "epilogue_shape": DEFAULT_EPILOGUE_SHAPE, "peer_shapes": DEFAULT_PEER_SHAPES,
                "peer_cores": DEFAULT_PEER_CORES, "precisions": DEFAULT_PRECISIONS, "sme_shapes": DEFAULT_SME_SHAPES,
                "svl": DEFAULT_SVL}  # fmt: skip
    for name, default in defaults.items():
        value = getattr(args, name)
        if value != default:
            parts += [f"--{name.replace('_', '-')}", str(value)]
    for flag in ("no_qemu", "no_mca", "no_plans", "no_decode", "no_sme", "peers"):
        if getattr(args, flag):
            parts.append(f"--{flag.replace('_', '-')}")
    for name in ("project", "before", "markdown", "json", "plot"):
        if getattr(args, name):
            parts += [f"--{name}", str(getattr(args, name))]
    return " ".join(parts)


def _plan_runs(args: argparse.Namespace, epilogue: Shape) -> list[tuple[Shape, str]]:
    """The epilogue shape without and with the fused epilogue, then every small-M shape (its plain plan run shared
    with the epilogue's when the shapes coincide)."""
    if args.no_plans or args.no_qemu:
        return []
    runs = [(epilogue, PLAN), (epilogue, PLAN_EPILOGUE)]
    return runs + [(s, PLAN) for s in shapes.parse_shapes(args.plan_shapes) if (s, PLAN) not in runs]


def choose_engine(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """(compilers, cores) of an engine's pricing, checked, and its tools there."""
    compilers = _choose("compiler", _split(args.compiler), list(load().compilers))
    chosen = cores.check_cores(_split(args.cores))
    if not compilers or not chosen:
        raise IsaforgeError("choose at least one compiler and one core")
    for tool in (llvm_mca.LLVM_MCA, objcode.LLVM_OBJDUMP, cores.CLANG):
        require(tool)
    return compilers, chosen


def _sme_wanted(args: argparse.Namespace, variants: list[str]) -> bool:
    """The SME section is run unless skipped, or --variants names none of the streaming variants (which only it
    measures: llvm-mca has no SME model); whether a streaming kernel is built is known once the build is."""
    streaming = {v.name for v in load().arch_variants(ARCH) if v.scalable == "streaming"}
    return not (args.no_sme or args.no_qemu) and (not variants or bool(streaming & set(variants)))


def choose(args: argparse.Namespace) -> libisaforge_runs.Selection:
    """Every selection checked before anything is built: a bad one is a one-line error naming the valid ones."""
    if MISSING:
        raise IsaforgeError(f"isaforge bench needs {MISSING}; install it with pip install 'isaforge[bench]'")
    cat = load()
    epilogue = shapes.parse_shapes(args.epilogue_shape)
    if len(epilogue) != 1:
        raise IsaforgeError(f"--epilogue-shape {args.epilogue_shape}: give one shape MxNxK")
    sel = libisaforge_runs.Selection(
        command_line(args),
        _choose("compiler", _split(args.compiler), list(cat.compilers)),
        cores.check_cores(_split(args.cores)),
        _ops(args.ops),
        variants := _choose("variant", _split(args.variants), [v.name for v in cat.arch_variants(ARCH)]),
        shapes.parse_shapes(args.shapes),
        _plan_runs(args, epilogue[0]),
        plans.load_before(args.before) if args.before else None,
        shapes.parse_shapes(args.plan_shapes),
        epilogue[0],
        args.sve_bits,
        args.jobs,
        mca=not args.no_mca,
        qemu=not args.no_qemu,
        quantized_plans=not args.no_plans,
        decode=not args.no_decode,
        peer_shapes=shapes.parse_shapes(args.peer_shapes) if args.peers else [],
        peer_cores=sidebyside.parse_cores(args.peer_cores) if args.peers else [],
        precisions=sidebyside.parse_precisions(args.precisions) if args.peers else [],
        sme_shapes=shapes.parse_shapes(args.sme_shapes) if _sme_wanted(args, variants) else [],
        svls=sme.parse_svl(args.svl),
    )
    if args.sve_bits % 128 or not 128 <= args.sve_bits <= 2048:
        raise IsaforgeError(f"--sve-bits {args.sve_bits}: choose a multiple of 128 from 128 to 2048")
    if args.no_mca and args.no_qemu and not args.peers:
        raise IsaforgeError("--no-mca and --no-qemu leave nothing to do")
    if args.plot and args.no_mca and not args.peers:
        raise IsaforgeError("--plot shows the llvm-mca figures; drop --no-mca")
    if not sel.compilers or not sel.cores:
        raise IsaforgeError("choose at least one compiler and one core")
    tools = [] if args.no_mca else [llvm_mca.LLVM_MCA, objcode.LLVM_OBJDUMP, cores.CLANG]
    tools += [] if args.no_qemu else [cat.arch(ARCH).qemu, executable.LLVM_NM, objcode.LLVM_OBJDUMP]
    tools += [cat.arch(ARCH).qemu, executable.LLVM_NM, llvm_mca.LLVM_MCA, wholecall.LLVM_MC] if args.peers else []
    for tool in tools:
        require(tool)
    return sel


def _stage(status: ui.StatusLine, stage: str) -> Callable[[int, int, str], None]:
    """Start a stage on the status line; the callback the stage reports its steps with."""
    status.step("bench", stage)
    return lambda done, total, detail: status.update("bench", f"{stage} {done}/{total} {detail}")


def _hot_loop_plot(path: Path) -> Path:
    return path.with_name(f"{path.stem}-hot-loops{path.suffix}")


def _write(args: argparse.Namespace, text: str, data: dict) -> None:
    """The markdown to --markdown (else stdout), the figures to --json when asked."""
    if args.markdown:
        args.markdown.write_text(text)
        print(f"bench: wrote {args.markdown}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")


def write_outputs(args: argparse.Namespace, result: results.BenchResult, peer: sidebyside.SideBySide | None) -> None:
    verdicts = goals.evaluate_goals(result)
    only_peers = peer is not None and args.no_mca and args.no_qemu
    text = "" if only_peers else libisaforge.markdown(result, verdicts)
    data = {} if only_peers or not args.json else figures.to_json(result, verdicts)
    if peer is not None:
        peer_goals = peer_report.goals(peer, result.compilers[0])
        versions = sidebyside.package_versions()
        text += "# libisaforge performance\n\n" if only_peers else "\n"
        text += peer_report.markdown(peer, peer_goals, result.command, versions)
        data["peers"] = peer_report.to_json(peer, peer_goals)
    _write(args, text, data)
    if args.plot:
        if peer is not None:
            peer_report.plot(peer, args.plot)
        if not args.no_mca:
            figures.plot(result, _hot_loop_plot(args.plot) if peer is not None else args.plot)


def run_engine(args: argparse.Namespace) -> int:
    compilers, chosen = choose_engine(args)
    status = ui.StatusLine(sys.stderr, quiet=args.quiet)
    try:
        result = engine.collect(args.project, compilers, chosen, args.jobs, lambda stage: _stage(status, stage))
    finally:
        status.close()
    result.tools["llvm-mca"] = libisaforge_runs.version([llvm_mca.LLVM_MCA], r"LLVM version [\w.]+")
    command = command_line(args)
    _write(args, engine_report.markdown(result, command), engine_report.to_json(result, command))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.project is not None:
        return run_engine(args)
    start = time.monotonic()
    sel = choose(args)
    status = ui.StatusLine(sys.stderr, quiet=args.quiet)
    try:
        result = libisaforge_runs.collect(sel, lambda stage: _stage(status, stage))
        peer = libisaforge_runs.collect_peers(sel, lambda stage: _stage(status, stage)) if args.peers else None
    finally:
        status.close()
    result.seconds = time.monotonic() - start
    write_outputs(args, result, peer)
    for rc in result.qemu:
        if rc.wrong:
            print(f"bench: warning: {rc.kernel} at {rc.shape} ({rc.mode}) gave a wrong C: {rc.wrong}", file=sys.stderr)
        if rc.counted and not rc.mac_check_ok:
            print(
                f"bench: warning: {rc.kernel} at {rc.shape} ({rc.mode}) executed {rc.mac_check:.4f}× its tiles' MACs",
                file=sys.stderr,
            )
    for row in peer.rows if peer is not None else []:
        if row.status == sidebyside.WRONG:
            where = f"{row.entrant} {row.precision} {row.shape} on {row.core}"
            print(f"bench: warning: {where} gave a wrong C: {row.detail}", file=sys.stderr)
    for library, why in peer.missing.items() if peer is not None else []:
        print(f"bench: {library} not run: {why}", file=sys.stderr)
    if REFERENCE in sel.variants and not args.no_mca:
        print("bench: the reference variant is not modeled by llvm-mca (portable C)", file=sys.stderr)
    return 0
