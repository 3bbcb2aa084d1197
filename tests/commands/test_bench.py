"""`isaforge bench` refuses bad selections and missing tools in one line, naming what to choose or install."""

from __future__ import annotations

import argparse
from pathlib import Path

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


def test_project_that_is_no_folder_is_one_line(capsys, tmp_path):
    err = one_line_error(capsys, ["bench", "--project", str(tmp_path / "nowhere")])
    assert "is not a directory" in err and "Meson or CMake project" in err


def test_project_that_is_libisaforge_itself_points_to_the_plain_bench(capsys):
    repo = Path(cores.__file__).resolve().parents[5]
    err = one_line_error(capsys, ["bench", "--project", str(repo), "--compiler", "clang"])
    assert "names libisaforge itself" in err and "without --project" in err


def test_project_with_an_unknown_compiler_lists_the_valid_ones(capsys, tmp_path):
    err = one_line_error(capsys, ["bench", "--project", str(tmp_path), "--compiler", "icc"])
    assert "unknown compiler 'icc'" in err and "clang" in err


def test_two_epilogue_shapes_are_refused(capsys):
    err = one_line_error(capsys, ["bench", "--no-mca", "--epilogue-shape", "8x8x8,16x16x16"])
    assert "--epilogue-shape 8x8x8,16x16x16: give one shape" in err


def test_a_bad_before_file_is_refused(capsys, tmp_path: Path):
    missing = tmp_path / "none.json"
    err = one_line_error(capsys, ["bench", "--no-mca", "--before", str(missing)])
    assert f"--before {missing}" in err


def _selection(argv: list[str]):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    return bench.choose(parser.parse_args(["--no-mca", *argv]))


def test_the_sme_section_is_asked_for_unless_skipped_or_no_streaming_variant_chosen():
    assert [s.label for s in _selection([]).sme_shapes] == ["256x256x256", "1x1024x1024"]
    assert _selection(["--svl", "16,64"]).svls == [16, 64]
    assert _selection(["--variants", "sme", "--sme-shapes", "8x16x4"]).sme_shapes[0].label == "8x16x4"
    for skipped in (["--no-sme"], ["--variants", "neon"], ["--no-qemu", "--peers"]):
        assert _selection(skipped).sme_shapes == [], skipped


def test_a_bad_svl_is_one_line(capsys):
    err = one_line_error(capsys, ["bench", "--no-mca", "--svl", "16,48"])
    assert "--svl 16,48" in err and "16, 32, 64, 128, 256" in err
