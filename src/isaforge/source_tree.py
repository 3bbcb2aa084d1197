"""Where libisaforge's source tree is: the checkout isaforge runs from, or the copy an installed wheel carries."""

from __future__ import annotations

from pathlib import Path

from isaforge.errors import IsaforgeError

PACKAGED_SOURCE = "_source"  # the source tree an installed wheel carries next to the modules (setup.py packs it)


def _checkout() -> Path | None:
    """The checkout this package runs from (src/isaforge/ inside a tree with meson.build), or None when installed."""
    package = Path(__file__).resolve().parent
    root = package.parent.parent
    return root if package.parent.name == "src" and (root / "meson.build").is_file() else None


def packaged_source() -> Path:
    """Where an installed wheel keeps libisaforge's source tree (it may not exist: editable installs have none)."""
    return Path(__file__).resolve().parent / PACKAGED_SOURCE


def source_root() -> Path:
    """The libisaforge source tree Meson builds: the checkout when running from one, else the wheel's copy of it,
    laid out like the checkout (meson.build, kernels/, toolchains/, src/isaforge/codegen.py …)."""
    checkout = _checkout()
    if checkout is not None:
        return checkout
    packaged = packaged_source()
    if not (packaged / "meson.build").is_file():
        raise IsaforgeError(
            f"isaforge runs from {packaged.parent}, which has neither a source checkout around it nor the source "
            f"tree a wheel carries ({PACKAGED_SOURCE}/); reinstall isaforge from a wheel or a git clone"
        )
    return packaged


def repo_root() -> Path:
    """The root of the isaforge source checkout this package runs from (src/isaforge/../..), for commands that
    write into the checkout (generated files, CI); an installed package has none."""
    package = Path(__file__).resolve().parent
    root = package.parent.parent
    if package.parent.name != "src" or not (root / "pyproject.toml").is_file():
        raise IsaforgeError(
            f"isaforge runs from {package}, not from a source checkout (src/isaforge/ of the repo); "
            "run it from a git clone, e.g. `PYTHONPATH=src python -m isaforge` or an editable install"
        )
    return root
