"""Generating an engine into its output directory: plan the build, render its files and write them all or none."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from isaforge.catalogue import Catalogue
from isaforge.engine.c_dispatch import DISPATCH_CODE, dispatch_owner, render_dispatch
from isaforge.engine.c_header import header_name, render_header
from isaforge.engine.manifest import manifest_name, render_manifest
from isaforge.engine.model import Engine, EngineError
from isaforge.engine.plan import Plan, plan


def write_all(outdir: Path, files: dict[str, str]) -> None:
    """Every file or none: all are written to temporary names first. Unchanged files are left alone, so a
    reconfigure does not rebuild what did not change."""
    outdir.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, text in files.items():
            final = outdir / name
            if final.is_file() and final.read_text() == text:
                continue
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=outdir)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            staged.append((Path(tmp), final))
    except OSError:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, final in staged:
        os.replace(tmp, final)


def generate(cat: Catalogue, engine: Engine, outdir: Path, arch: str, compiler: str, cc: list[str]) -> Plan:
    existing = outdir / DISPATCH_CODE
    if existing.is_file() and dispatch_owner(existing.read_text()) not in ("", engine.name):
        raise EngineError(
            f"{outdir}: already holds the dispatch of engine {dispatch_owner(existing.read_text())}; generate each "
            "engine into its own directory (in Meson: its own subdir())"
        )
    p = plan(cat, engine, arch, compiler, cc)
    write_all(
        outdir,
        {
            header_name(engine): render_header(cat, p),
            DISPATCH_CODE: render_dispatch(cat, p),
            manifest_name(engine): render_manifest(cat, p),
        },
    )
    return p
