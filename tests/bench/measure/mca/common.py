"""What the llvm-mca tests share: the saved tool outputs (tests/bench/fixtures/README.md) and kernels read from them."""

from __future__ import annotations

from pathlib import Path

from isaforge.bench.measure.mca import macs, objcode
from isaforge.bench.measure.mca.analyse import KernelLoop
from isaforge.bench.measure.mca.llvm_mca import McaResult, parse_mca
from isaforge.catalogue import load, parse_kernel_name

FIXTURES = Path(__file__).parents[2] / "fixtures"
F32 = "isf_ukernel_gemm_f32_8x12_neon"


def function(fixture: str, name: str) -> list[objcode.Insn]:
    return objcode.parse_objdump((FIXTURES / fixture).read_text())[name]


def kernel_loop(fixture: str, name: str) -> KernelLoop:
    body = function(fixture, name)
    kind = macs.kernel_kind(body)
    kernel = parse_kernel_name(name.removeprefix(objcode.KERNEL_PREFIX), load().ops)
    return KernelLoop(kernel, kind, macs.hot_loop(body, kind), len(body))


def insn(text: str) -> objcode.Insn:
    mnemonic, _, rest = text.partition(" ")
    return objcode.Insn(0, mnemonic, objcode.split_operands(rest))


def saved_mca(fixture: str) -> McaResult:
    return parse_mca((FIXTURES / fixture).read_text())
