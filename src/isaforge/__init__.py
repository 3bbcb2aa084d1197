"""isaforge: cross-build, dispatch and QEMU-test Arm kernel libraries."""

from __future__ import annotations

# `pytest -p isaforge` opts a project into isaforge's pytest plugin (it is never loaded otherwise).
pytest_plugins = ["isaforge.pytest_plugin"]


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata costs half of the start-up of codegen.py, which
    # Meson runs dozens of times per configure and which never asks for it.
    if name != "__version__":
        raise AttributeError(f"module 'isaforge' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 (the point: imported late)

    try:
        return version("isaforge")  # from VERSION, the one place the project's version is written
    except PackageNotFoundError:  # a bare source tree (Meson running codegen.py)
        return "0+unknown"
