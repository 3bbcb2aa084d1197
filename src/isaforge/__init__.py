"""isaforge: cross-build, dispatch and QEMU-test Arm kernel libraries."""

__version__ = "0.1.0"
