"""engine/generate.py: an engine's files written into its own directory, all or none, and only when changed."""

from __future__ import annotations

from tests.engine.engines import GOOD, make_engine, one_line_error, run


def test_one_engine_per_output_directory(tmp_path):
    out = tmp_path / "out"
    assert run(make_engine(tmp_path / "a", GOOD), out).returncode == 0
    other = make_engine(tmp_path / "b", GOOD)
    other.write_text(other.read_text().replace('name = "eng"', 'name = "other"'))
    one_line_error(run(other, out), "already holds the dispatch of engine eng", "its own directory")


def test_regenerating_leaves_unchanged_files_alone(tmp_path):
    toml = make_engine(tmp_path / "e", GOOD)
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert run(toml, out).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before
