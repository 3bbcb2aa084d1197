"""isaforge: cross-build, dispatch and QEMU-test Arm kernel libraries."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("isaforge")  # from VERSION, the one place the project's version is written
except PackageNotFoundError:  # a bare source tree (Meson running codegen.py)
    __version__ = "0+unknown"

# `pytest -p isaforge` opts a project into isaforge's pytest plugin (it is never loaded otherwise).
pytest_plugins = ["isaforge.pytest_plugin"]
