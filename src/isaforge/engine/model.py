"""What an engine is once its catalogue has been read: ops with their C signatures, roles and packing, kernels, and
the engine itself. Only data and the naming rules; reading engine.toml is load.py's, checking the kernels checks.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from isaforge.catalogue import CatalogueError

IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*$")
OP_NAME = re.compile(r"^[a-z]+_[a-z0-9]+$")
SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ANY_ROLE = "any"  # the one role of an op that declares none
MAX_TUNED = 8  # cores one kernel may be tuned for (engine_dispatch.c ISF_ENGINE_MAX_TUNED)
REFERENCE_DIR = "reference"


class EngineError(CatalogueError):
    """A mistake in an engine's catalogue or kernel tree: one line naming the file and the fix."""


@dataclass(frozen=True)
class Signature:
    name: str
    returns: str
    params: str
    args: str
    doc: str


@dataclass(frozen=True)
class Role:
    """A role of an op: its kernels serve the calls whose `param` compares to `value` so (the last role: any call)."""

    name: str
    param: str = ""
    cmp: str = ""
    value: int = 0


@dataclass(frozen=True)
class EngineOp:
    """An op: a run function of its signature and, as an interface, the members chosen with it (functions such as
    get_mr or packed sizes, each of its own signature), the packing contract its kernels state, and the roles a call
    chooses among by a rule over its parameters."""

    name: str
    index: int
    signature: Signature
    doc: str
    members: tuple[tuple[str, Signature], ...] = ()
    packing: tuple[str, ...] = ()  # the keys each kernel's packing gives (what packed operands depend on)
    roles: tuple[Role, ...] = (Role(ANY_ROLE),)
    share_packing: bool = False  # the roles read the same packed operands: every kernel's packing agrees, per arch

    @property
    def selector(self) -> str:
        """The parameter the role rules read ("" when the op has one role)."""
        return next((r.param for r in self.roles if r.param), "")


@dataclass(frozen=True)
class Kernel:
    """One kernel of one arch (or a portable one): a file of the grammar tree, or a [kernel.<name>] of the catalogue
    with its own sources and entry symbol."""

    name: str
    op: str
    variant: str  # a catalogue variant, a feature set (fp16+dotprod) or ref
    arch_dir: str  # "reference" for the portable ones
    sources: tuple[Path, ...]
    symbol: str
    mr: int = 0
    nr: int = 0
    kr: int = 0
    tuned_for: tuple[str, ...] = ()  # catalogue core names: preferred on those cores, never required
    members: tuple[tuple[str, str], ...] = ()  # (member, symbol) for each member of the op
    packing: tuple[tuple[str, int], ...] = ()  # (key, value) for each packing key of the op
    roles: tuple[str, ...] = ()  # the roles it serves; () every role


@dataclass(frozen=True)
class Declared:
    """A [kernel.<name>] table: a kernel where it is, under the name it has."""

    name: str
    op: str
    arches: tuple[str, ...]  # () for a portable kernel (no features), built for every arch
    labels: tuple[str, ...]  # per arch: its variant, or feature set (fp16+dotprod), or ref
    sources: tuple[Path, ...]
    symbol: str
    tile: tuple[int, int, int]
    tuned_for: tuple[str, ...] = ()
    members: tuple[tuple[str, str], ...] = ()
    packing: tuple[tuple[str, int], ...] = ()
    roles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Engine:
    path: Path
    name: str
    variants: tuple[str, ...] | None  # None: every variant of the catalogue
    kernel_root: Path
    includes: tuple[str, ...]
    ops: dict[str, EngineOp]
    prefer: dict[str, tuple[str, ...]]
    arches: tuple[str, ...] | None = None  # None: every arch of the catalogue
    declared: tuple[Declared, ...] = ()
    shared_sources: tuple[Path, ...] = ()  # at the baseline, for every kernel (a vendored library's packers, …)
    include_dirs: tuple[Path, ...] = ()  # for every kernel library's compiles (a vendored library's headers)

    @property
    def disable_variable(self) -> str:
        return f"{self.name.upper()}_DISABLE"

    def symbol(self, kernel: str) -> str:
        return f"{self.name}_{kernel}"
