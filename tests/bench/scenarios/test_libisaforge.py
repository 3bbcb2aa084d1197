"""bench.scenarios.libisaforge: which ops each kind of run takes."""

from __future__ import annotations

from isaforge.bench.scenarios import libisaforge
from isaforge.catalogue import load


def test_without_ops_the_one_call_counts_take_only_the_ops_that_have_one_call():
    # gemm_s4 has kernels of its own but no one-call function: counting it as a plain GEMM returned INVALID_ARG
    plain, quantized, mca = libisaforge.split_ops([])
    cat = load()
    assert plain and all(cat.ops[o].plain for o in plain)
    assert "gemm_s4" in quantized and "gemm_qs8" in quantized and not set(plain) & set(quantized)
    assert mca is None  # every kernel's hot loop, gemm_s4's too
