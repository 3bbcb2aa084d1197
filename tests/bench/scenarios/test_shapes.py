"""bench.scenarios.shapes: MxNxK as the options spell it."""

from __future__ import annotations

import pytest

from isaforge.bench.scenarios import shapes
from isaforge.bench.scenarios.shapes import Shape
from isaforge.errors import IsaforgeError


def test_parse_shapes():
    assert shapes.parse_shapes("64, 256x256x64") == [Shape(64, 64, 64), Shape(256, 256, 64)]
    for bad in ("64x64", "0x1x1", "axbxc", ""):
        with pytest.raises(IsaforgeError):
            shapes.parse_shapes(bad)
