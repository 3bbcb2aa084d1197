"""`isaforge bench` refuses bad selections and missing tools in one line, naming what to choose or install."""

from __future__ import annotations

from isaforge.bench.measure.mca import cores
from isaforge.catalogue import load
from isaforge.cli import main
from isaforge.commands import bench


def one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    return err


def test_unknown_core_lists_the_valid_ones(capsys):
    err = one_line_error(capsys, ["bench", "--cores", "neoverse-n1,cortex-a53"])
    assert "unknown core 'cortex-a53'" in err and all(c in err for c in cores.CORES)


def test_unknown_op_lists_the_valid_ones(capsys):
    err = one_line_error(capsys, ["bench", "--ops", "f32,gemm_f64"])
    assert "unknown op 'gemm_f64'" in err and all(op in err for op in load().plain_ops())


def test_missing_llvm_mca_names_its_package(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    err = one_line_error(capsys, ["bench", "--no-qemu"])
    assert "llvm-mca-19 not found" in err and "llvm-19" in err


def test_missing_qemu_names_its_package(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    err = one_line_error(capsys, ["bench", "--no-mca"])
    assert "qemu-aarch64 not found" in err and "qemu-user" in err


def test_without_ops_the_one_call_counts_take_only_the_ops_that_have_one_call():
    # gemm_s4 has kernels of its own but no one-call function: counting it as a plain GEMM returned INVALID_ARG
    plain, quantized, mca = bench.split_ops([])
    cat = load()
    assert plain and all(cat.ops[o].plain for o in plain)
    assert "gemm_s4" in quantized and "gemm_qs8" in quantized and not set(plain) & set(quantized)
    assert mca is None  # every kernel's hot loop, gemm_s4's too
