"""isaforge.source_tree: the source tree isaforge builds from."""

from __future__ import annotations

from isaforge.source_tree import repo_root
from tests.toolchains.common import REPO


def test_repo_root_is_this_checkout():
    assert repo_root() == REPO
    assert (REPO / "src" / "isaforge" / "isa.toml").is_file()
