"""Meson cross files (toolchains/meson/<triple>-<compiler>.ini): deterministic, a function of the catalogue only."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from isaforge.catalogue import Catalogue
from isaforge.toolchains.generated import CROSS_HEADER, stale_files
from isaforge.toolchains.model import CROSS_DIR, Toolchain, toolchains


def meson_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def meson_array(values: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(meson_quote(v) for v in values) + "]"


def render_cross_file(tc: Toolchain) -> str:
    """The Meson cross file of `tc`: deterministic, a function of the catalogue only."""
    lines = [
        CROSS_HEADER,
        f"# {tc.triple} with {tc.compiler.name}. Tests run under {tc.arch.qemu}; pick the emulated CPU model with",
        "# the QEMU_CPU environment variable (e.g. QEMU_CPU=max meson test).",
        "",
        "[binaries]",
        f"c = {meson_array(tc.c)}",
        f"ar = {meson_quote(tc.ar)}",
        f"strip = {meson_quote(tc.strip)}",
        f"pkg-config = {meson_quote('pkg-config')}",
        f"exe_wrapper = {meson_array(tc.exe_wrapper)}",
        "",
    ]
    if tc.compiler.link_args:
        lines += ["[built-in options]", f"c_link_args = {meson_array(tc.compiler.link_args)}", ""]
    lines += [
        "[properties]",
        f"isaforge_arch = {meson_quote(tc.arch.name)}",
        f"isaforge_triple = {meson_quote(tc.triple)}",
        "",
        "[host_machine]",
        f"system = {meson_quote('linux')}",
        f"cpu_family = {meson_quote(tc.arch.meson_cpu_family)}",
        f"cpu = {meson_quote(tc.arch.meson_cpu)}",
        f"endian = {meson_quote('little')}",
    ]
    return "\n".join(lines) + "\n"


def cross_files(cat: Catalogue | None = None) -> dict[PurePosixPath, str]:
    """Every cross file: repo-relative path -> text."""
    return {tc.cross_file: render_cross_file(tc) for tc in toolchains(cat)}


def stale_cross_files(root: Path, cat: Catalogue | None = None) -> list[PurePosixPath]:
    """Generated cross files under toolchains/meson/ that the catalogue no longer makes (repo-relative)."""
    return stale_files(root, CROSS_DIR, cross_files(cat), "*.ini")
