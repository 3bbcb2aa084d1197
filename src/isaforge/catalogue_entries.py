"""The entries of the ISA catalogue (isa.toml): one frozen dataclass per kind of entry, the names and constants they
share, and the parsers of the strings the catalogue and the kernel file names hold. catalogue.py loads the file
(catalogue_reading.py, catalogue_checks.py) and answers questions across entries; kernel_inventory.py those about a
source tree's kernels.

Standard library only: Meson reaches it through codegen.py from a bare source tree, with nothing installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from isaforge.errors import IsaforgeError  # stdlib-only, like this module (Meson runs codegen.py bare)

CATALOGUE_PATH = Path(__file__).with_name("isa.toml")
HOST_ARCH = "host"
REFERENCE = "ref"

# <op>_<dtype>_<MR>x<NR>[x<KR>]_<variant>: docs/kernel_names.md is the written grammar.
KERNEL_NAME = re.compile(
    r"^(?P<op>[a-z]+)_(?P<dtype>[a-z0-9]+)_(?P<mr>[1-9][0-9]*)x(?P<nr>[1-9][0-9]*)(?:x(?P<kr>[1-9][0-9]*))?"
    r"_(?P<variant>[a-z0-9]+)$"
)
KERNEL_SUFFIXES = (".c", ".S")
# Every object of a declared variant library is compiled with -DISAFORGE_VARIANT=<variant>: check-isolation holds
# it to that variant's features, and every other object to the arch baseline.
VARIANT_DEFINE = "ISAFORGE_VARIANT"
PREFERENCE_SLOTS = 64  # kernels one variant may order for one op
# Catalogue variants rank RANK_STEP apart, so that a feature set (FEATURE_SET_JOIN-joined features, a variant derived
# from theirs) ranks between its most preferred feature's variant and the next one.
RANK_STEP = 16
FEATURE_SET_JOIN = "+"
# Every panel starts on this boundary (isf_internal.h); part of every layout.
PANEL_ALIGN = 64
# The packer of a panel that has no vectorised loop: only the portable one of kernels/runtime/pack.c.
GENERIC_PACKER = "generic"
# Version of the canonical layout string: change it only with the panel format itself (stored buffers depend on it).
LAYOUT_STRING_VERSION = 1


class CatalogueError(IsaforgeError):
    """The catalogue, or a request against it, is inconsistent."""


@dataclass(frozen=True)
class Arch:
    name: str
    triple: str
    kernel_dir: str
    meson_cpu_family: str
    meson_cpu: str
    qemu: str
    sysroot: str
    baseline: tuple[str, ...]
    baseline_extra: dict[str, tuple[str, ...]] = field(compare=False)  # per compiler; kept out of the hash
    variant_extra: tuple[str, ...]
    assembler_all: tuple[str, ...]
    debian_packages: tuple[str, ...]
    judge: str = "gnu"  # check-isolation's tools: "gnu" (binutils of the triple) or "llvm" (the clang compiler's)


@dataclass(frozen=True)
class Compiler:
    name: str
    c: tuple[str, ...]
    ar: str
    strip: str
    link_args: tuple[str, ...]
    linker: str | None
    debian_packages: tuple[str, ...]
    objdump: str = ""

    def command(self, arch: Arch) -> list[str]:
        return [part.format(triple=arch.triple) for part in self.c]

    def tool(self, template: str, arch: Arch) -> str:
        return template.format(triple=arch.triple)


@dataclass(frozen=True)
class FeatureOnArch:
    march: str
    ext: str
    extra: dict[str, tuple[str, ...]]
    hwcap: tuple[tuple[int, int], ...]
    cpuinfo: tuple[str, ...]
    implies: tuple[str, ...]


@dataclass(frozen=True)
class Feature:
    name: str
    bit: int
    title: str
    per_arch: dict[str, FeatureOnArch]

    @property
    def mask(self) -> int:
        return 1 << self.bit


@dataclass(frozen=True)
class Variant:
    name: str
    requires: tuple[str, ...]
    arches: tuple[str, ...]
    probe: str
    rank: int
    scalable: str  # "" fixed, "sve": NR scales with the SVE vector length, "streaming": with SME's SVL
    asm_probe: dict[str, str] = field(compare=False)
    prefer: tuple[str, ...] = ()  # kernels of one op in this variant, most preferred first
    # Per kernel of fewer rows than its op's full kernel (a row kernel, MR = 1, or a few-row one): the most rows left
    # at a region's end it takes, MR at a time, rather than one padded full tile. Kernels not listed: MR / 2 of the
    # full kernel for a row kernel, their own MR for a few-row kernel (kernels/runtime/driver.c, next_chunk).
    # (kernel, arch, rows): arch "" for every arch the variant builds.
    tail_rows: tuple[tuple[str, str, int], ...] = ()
    # The share of the preferred kernel's padded columns, in percent, a column sibling (same MR, other NR) must save
    # to be chosen for a GEMM's n (kernels/runtime/driver.c, isf_kernel_for_columns).
    column_margin: int = 0

    def tail_rows_on(self, arch: str) -> dict[str, int]:
        """The tail_rows that hold on `arch`: a kernel's own entry for the arch over its every-arch one."""
        rows = {name: n for name, on, n in self.tail_rows if not on}
        rows.update({name: n for name, on, n in self.tail_rows if on == arch})
        return rows


@dataclass(frozen=True)
class QemuSme:
    """Where the SME2-capable QEMU lives, what it must be and what its models have ([qemu_sme] of isa.toml)."""

    dir: Path
    min_version: tuple[int, ...]
    suite: str
    package: str
    binaries: tuple[str, ...]
    cpus: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    property_off: dict[str, tuple[str, ...]] = field(default_factory=dict)


# Where a CPU model is asked for, this prefix runs it under the SME2-capable QEMU ([qemu_sme]).
SME_QEMU_PREFIX = "qemu-sme:"


@dataclass(frozen=True)
class CpuSpec:
    """A CPU model as isaforge takes it: `[qemu-sme:]<model>[,<property>=<value>…]`, the properties QEMU's."""

    model: str
    properties: tuple[str, ...]
    sme_qemu: bool

    @classmethod
    def parse(cls, text: str) -> CpuSpec:
        sme_qemu = text.startswith(SME_QEMU_PREFIX)
        model, *properties = text.removeprefix(SME_QEMU_PREFIX).split(",")
        return cls(model, tuple(properties), sme_qemu)

    @property
    def qemu_cpu(self) -> str:
        """What QEMU's -cpu gets."""
        return ",".join((self.model, *self.properties))

    def switched_off(self) -> list[str]:
        """The properties set to off (`sme=off` → `sme`)."""
        return [p.removesuffix("=off") for p in self.properties if p.endswith("=off")]


@dataclass(frozen=True)
class DType:
    name: str
    c: str  # the public API's C type
    bytes: int
    numpy: str
    kind: str  # float, binary16, bfloat16 or int: how tools make and read one
    bits: int = 0  # below 8 · bytes: that many bits per element, packed (s4: two per byte); 0: 8 · bytes

    @property
    def element_bits(self) -> int:
        return self.bits or 8 * self.bytes


DTYPE_KINDS = ("float", "binary16", "bfloat16", "int")


@dataclass(frozen=True)
class Signature:
    name: str
    params: str  # C parameter list with A, B, C standing for the op's element types
    args: str
    driver: str
    doc: str


@dataclass(frozen=True)
class Op:
    name: str
    index: int
    signature: Signature
    a: DType
    b: DType
    c: DType
    acc: DType
    doc: str
    narrow_accumulation: tuple[str, ...]
    widened: dict[str, str] = field(compare=False)  # variant -> op whose kernels run on panels widened to fp32
    kernels_of: str = ""  # the op whose kernels it runs, its own epilogue on their int32 sums (the quantized ops)

    @property
    def plain(self) -> bool:
        """It has a typed one-call function (isf_<op>); the others run through plans only."""
        return bool(self.signature.params)

    @property
    def quantized(self) -> bool:
        """It takes isf_quant_params (it runs another op's kernels with its own epilogue)."""
        return bool(self.kernels_of)

    @property
    def panel_source(self) -> str:
        """The input elements its layouts name: A's, or A's and W's when W is narrower (int4 weights)."""
        return self.a.name if self.b.element_bits == self.a.element_bits else f"{self.a.name}{self.b.name}"

    @property
    def enum(self) -> str:
        return f"ISF_OP_{self.name.upper()}"

    @property
    def function(self) -> str:
        return f"isf_{self.name}"

    def c_params(self) -> str:
        """The public function's parameters, with the element types filled in."""
        types = {"A": self.a.c, "B": self.b.c, "C": self.c.c}
        return re.sub(r"\b[ABC]\b(?= \*)", lambda m: types[m[0]], self.signature.params)


@dataclass(frozen=True)
class KernelName:
    name: str
    op: str
    mr: int
    nr: int
    kr: int
    variant: str
    runs: str = ""  # a widened kernel: the fp32 micro-kernel it runs on widened panels
    shares: str = ""  # an op with `kernels` in [op.*]: the other op whose kernel (same name, same panels) it runs

    @property
    def symbol(self) -> str:
        return f"isf_ukernel_{self.runs or self.name}"


# How a scalable variant's NR grows: with nothing, the SVE vector length (VL) or the streaming one (SVL, SME). The
# numbers are the runtime's (isf_kernel.scalable, isf_kernel_desc.scalable); the suffixes name layouts.
SCALABLE_KINDS = {"": 0, "sve": 1, "streaming": 2}
SCALING_SUFFIX = {"": "", "sve": ".vl", "streaming": ".svl"}


@dataclass(frozen=True)
class Layout:
    """The panels a kernel reads (kernels/runtime/isf_internal.h): element types, tile, scaling, alignment."""

    source: str  # the op's input element
    panel: str  # the element in the panels: fp32 for widened kernels, else `source`
    mr: int
    nr: int  # at 128-bit vectors when scalable
    kr: int
    scalable: str  # a variant's kind: "", "sve" or "streaming"
    align: int = PANEL_ALIGN

    @property
    def name(self) -> str:
        """The registry key of [layout] in isa.toml: <in>[><panel>].<MR>x<NR>x<KR>[.vl|.svl]."""
        elements = self.source if self.panel == self.source else f"{self.source}>{self.panel}"
        return f"{elements}.{self.mr}x{self.nr}x{self.kr}{SCALING_SUFFIX[self.scalable]}"

    @property
    def symbol(self) -> str:
        """The name as a C identifier (the packer instantiations' suffix)."""
        return self.name.replace(">", "_").replace(".", "_")

    @property
    def canonical(self) -> str:
        return f"isaforge-layout-{LAYOUT_STRING_VERSION}:{self.name}:align{self.align}"

    @property
    def id(self) -> int:
        return fnv1a32(self.canonical)

    def describe(self) -> str:
        scaling = {"": "", "sve": " × VL/128", "streaming": " × SVL/128"}[self.scalable]
        return (
            f"{self.name} ({self.panel} panels from {self.source} input, MR {self.mr}, NR {self.nr}{scaling}, "
            f"KR {self.kr}, {self.align}-byte aligned)"
        )


@dataclass(frozen=True)
class Packer:
    """One side's packer of a layout: `generic`, or a vectorised family of kernels/pack/<variant>/."""

    variant: str  # "" for generic
    family: str

    @property
    def generic(self) -> bool:
        return not self.variant


@dataclass(frozen=True)
class LayoutPackers:
    name: str
    a: Packer
    b: Packer


def c_string(text: str) -> str:
    """A C string literal of `text` (generated tables and dispatch)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def preference_rank(rank: int, prefer: tuple[str, ...], name: str) -> int:
    """Dispatch's order of a kernel: by its variant's rank, then by its place in that variant's `prefer` list."""
    within = len(prefer) - prefer.index(name) if name in prefer else 0
    return rank * PREFERENCE_SLOTS + within


def fnv1a32(text: str) -> int:
    """FNV-1a, 32-bit: a layout's id from its canonical string (no table position, so stable across builds)."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def parse_packer(layout: str, side: str, text: str) -> Packer:
    if text == GENERIC_PACKER:
        return Packer("", GENERIC_PACKER)
    variant, sep, family = text.partition(":")
    if not sep or not re.fullmatch(r"[a-z0-9]+", variant) or not re.fullmatch(r"[a-z0-9_]+", family):
        raise CatalogueError(f"[layout] {layout!r}: {side} = {text!r} is neither 'generic' nor '<variant>:<family>'")
    return Packer(variant, family)


def parse_kernel_name(stem: str, ops: dict[str, Op] | None = None) -> KernelName:
    """Split a kernel name by the grammar; `ops` (when given) must know `<op>_<dtype>`."""
    m = KERNEL_NAME.match(stem)
    if not m:
        raise CatalogueError(f"kernel name {stem!r} does not follow <op>_<dtype>_<MR>x<NR>[x<KR>]_<variant>")
    op = f"{m['op']}_{m['dtype']}"
    if ops is not None and op not in ops:
        raise CatalogueError(f"kernel {stem!r}: unknown op {op!r} (known: {', '.join(ops)})")
    return KernelName(stem, op, int(m["mr"]), int(m["nr"]), int(m["kr"] or 1), m["variant"])


@dataclass(frozen=True)
class CpuPart:
    """One [cpu_part."<implementer>:<part>"] entry: a core as its MIDR names it (the MIDR fallback of detection)."""

    implementer: int  # MIDR bits [31:24], /proc/cpuinfo "CPU implementer"
    part: int  # MIDR bits [15:4], /proc/cpuinfo "CPU part"
    name: str
    features: tuple[str, ...]  # every core of the part has them; on an arch only those that exist there count
    l1d_kib: int = 0  # its L1 data cache where the TRM fixes one size, else 0 (the driver assumes 32 KiB)

    @property
    def key(self) -> str:
        return f"0x{self.implementer:02x}:0x{self.part:03x}"
