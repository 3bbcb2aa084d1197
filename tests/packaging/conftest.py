"""The installed-wheel fixtures for every test of this folder (tests/packaging/wheel_env.py)."""

from tests.packaging.wheel_env import installed_isaforge, isaforge_wheel

__all__ = ["installed_isaforge", "isaforge_wheel"]
