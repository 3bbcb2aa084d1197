"""The SME and SME2 forms of the `.inst` encoder as rows (aarch64): for each form, its mnemonic, fixed bits (bit
layouts from the Arm ARM), the feature GNU as knows it by, the operands as the assembler spells them with `<name>`
placeholders, and the fields that hold each placeholder. inst_sme.py reads the rows into forms and encodes against
them; its docstring is the notation's.

Standard library only: Meson runs inst.py, and so this module, from a bare source tree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# Rows: mnemonic, fixed bits, feature, `|` operands `|` fields. Families that differ only in an element size, a
# horizontal/vertical slice or a vector-group count are written once and expanded by the generators below.

_SIMPLE = """
smstart  d503477f  sme        |                                 |
smstart  d503437f  sme        | sm                              |
smstart  d503457f  sme        | za                              |
smstop   d503467f  sme        |                                 |
smstop   d503427f  sme        | sm                              |
smstop   d503447f  sme        | za                              |
rdsvl    04bf5800  sme        | <d:xzr>, #<i>                   | d=4:0 i~=10:5
zero     c0480001  sme2       | {zt0}                           |
ldr      e11f8000  sme2       | zt0, [<n:xsp>]                  | n=9:5
str      e13f8000  sme2       | zt0, [<n:xsp>]                  | n=9:5
"""

_SIZE = {"b": 0, "h": 1, "s": 2, "d": 3}
_PMN = "p<n>/m, p<m>/m"
_PMN_FIELDS = "n=12:10 m=15:13 zn=9:5"

# mnemonic, fixed bits, tile size, source element size, feature
_OUTER = [
    ("fmopa", 0x80800000, "s", "s", "sme"),
    ("fmops", 0x80800010, "s", "s", "sme"),
    ("fmopa", 0x81A00000, "s", "h", "sme"),
    ("fmops", 0x81A00010, "s", "h", "sme"),
    ("bfmopa", 0x81800000, "s", "h", "sme"),
    ("bfmops", 0x81800010, "s", "h", "sme"),
    ("smopa", 0xA0800000, "s", "b", "sme"),
    ("smops", 0xA0800010, "s", "b", "sme"),
    ("umopa", 0xA1A00000, "s", "b", "sme"),
    ("umops", 0xA1A00010, "s", "b", "sme"),
    ("sumopa", 0xA0A00000, "s", "b", "sme"),
    ("sumops", 0xA0A00010, "s", "b", "sme"),
    ("usmopa", 0xA1800000, "s", "b", "sme"),
    ("usmops", 0xA1800010, "s", "b", "sme"),
    ("fmopa", 0x80C00000, "d", "d", "sme-f64f64"),
    ("fmops", 0x80C00010, "d", "d", "sme-f64f64"),
    ("smopa", 0xA0C00000, "d", "h", "sme-i16i64"),
    ("smops", 0xA0C00010, "d", "h", "sme-i16i64"),
    ("umopa", 0xA1E00000, "d", "h", "sme-i16i64"),
    ("umops", 0xA1E00010, "d", "h", "sme-i16i64"),
    ("sumopa", 0xA0E00000, "d", "h", "sme-i16i64"),
    ("sumops", 0xA0E00010, "d", "h", "sme-i16i64"),
    ("usmopa", 0xA1C00000, "d", "h", "sme-i16i64"),
    ("usmops", 0xA1C00010, "d", "h", "sme-i16i64"),
    ("smopa", 0xA0800008, "s", "h", "sme2"),
    ("smops", 0xA0800018, "s", "h", "sme2"),
    ("umopa", 0xA1800008, "s", "h", "sme2"),
    ("umops", 0xA1800018, "s", "h", "sme2"),
    ("bmopa", 0x80800008, "s", "s", "sme2"),
    ("bmops", 0x80800018, "s", "s", "sme2"),
]

Row = tuple[str, int, str, str, str]  # mnemonic, fixed bits, feature, operands, fields


def _outer() -> Iterator[Row]:
    for mnemonic, base, tile, src, feature in _OUTER:
        tile_bits = "d=1:0" if tile == "s" else "d=2:0"
        ops = f"za<d>.{tile}, {_PMN}, z<zn>.{src}, z<zm>.{src}"
        yield mnemonic, base, feature, ops, f"{tile_bits} {_PMN_FIELDS} zm=20:16"
    for mnemonic, base, tile, feature in (
        ("addha", 0xC0900000, "s", "sme"),
        ("addva", 0xC0910000, "s", "sme"),
        ("addha", 0xC0D00000, "d", "sme-i16i64"),
        ("addva", 0xC0D10000, "d", "sme-i16i64"),
    ):
        tile_bits = "d=1:0" if tile == "s" else "d=2:0"
        yield mnemonic, base, feature, f"za<d>.{tile}, {_PMN}, z<zn>.{tile}", f"{tile_bits} {_PMN_FIELDS}"


# A tile slice per element size: how the tile is written and where tile and slice offset go when they share the
# low four bits (ld1/st1, mova to a tile; mova from a tile has them five bits up).
_SLICE = {
    "b": ("za0{hv}.b[w<s>, <o>]", ("o=3:0",)),
    "h": ("za<t>{hv}.h[w<s>, <o>]", ("t=3", "o=2:0")),
    "s": ("za<t>{hv}.s[w<s>, <o>]", ("t=3:2", "o=1:0")),
    "d": ("za<t>{hv}.d[w<s>, <o>]", ("t=3:1", "o=0")),
    "q": ("za<t>{hv}.q[w<s>, 0]", ("t=3:0",)),
}
_LD1 = {"b": ("ld1b", 0xE0000000, ""), "h": ("ld1h", 0xE0400000, ", lsl #1"), "s": ("ld1w", 0xE0800000, ", lsl #2")}
_LD1 |= {"d": ("ld1d", 0xE0C00000, ", lsl #3"), "q": ("ld1q", 0xE1C00000, ", lsl #4")}
_HV = (("h", 0), ("v", 1 << 15))


def _shift(fields: Sequence[str], by: int) -> str:
    """Tile/offset fields moved `by` bits up."""
    out = []
    for field in fields:
        name, _, bits = field.partition("=")
        moved = [":".join(str(int(b) + by) for b in part.split(":")) for part in bits.split(",")]
        out.append(f"{name}={','.join(moved)}")
    return " ".join(out)


def _tile_slices() -> Iterator[Row]:
    for size, (tile, fields) in _SLICE.items():
        mnemonic, base, lsl = _LD1[size]
        for hv, v_bit in _HV:
            slice_ = tile.format(hv=hv)
            common = f"s@12=14:13 g=12:10 n=9:5 {' '.join(fields)}"
            for load, store in ((mnemonic, 0), ("st1" + mnemonic[3:], 1 << 21)):
                pred = "p<g>/z" if not store else "p<g>"
                word = base | v_bit | store
                yield load, word, "sme", f"{{{slice_}}}, {pred}, [<n:xsp>, <m:xzr>{lsl}]", f"{common} m=20:16"
                yield load, word | 0x1F0000, "sme", f"{{{slice_}}}, {pred}, [<n:xsp>]", common
            for mova in ("mova", "mov"):
                to_vec = 0xC0020000 | _SIZE.get(size, 3) << 22 | (1 << 16 if size == "q" else 0) | v_bit
                to_tile = 0xC0000000 | _SIZE.get(size, 3) << 22 | (1 << 16 if size == "q" else 0) | v_bit
                yield (
                    mova,
                    to_vec,
                    "sme",
                    f"z<d>.{size}, p<g>/m, {slice_}",
                    f"s@12=14:13 g=12:10 d=4:0 {_shift(fields, 5)}",
                )
                yield mova, to_tile, "sme", f"{slice_}, p<g>/m, z<n>.{size}", f"{common}"
    for mnemonic, base in (("ldr", 0xE1000000), ("str", 0xE1200000)):
        yield mnemonic, base, "sme", "za[w<s>, <o>], [<n:xsp>, #<o+0>, mul vl]", "s@12=14:13 n=9:5 o=3:0"
        yield mnemonic, base, "sme", "za[w<s>, 0], [<n:xsp>]", "s@12=14:13 n=9:5"


_WHILE = {"lt": 0x0400, "lo": 0x0C00, "le": 0x0408, "ls": 0x0C08, "gt": 0x0008, "ge": 0x0000, "hi": 0x0808}
_WHILE["hs"] = 0x0800


def _predicates() -> Iterator[Row]:
    for size, code in _SIZE.items():
        yield "ptrue", 0x25207810 | code << 22, "sme2", f"pn<d>.{size}", "d@8=2:0"
        for cond, bits in _WHILE.items():
            for vl, vl_bit in (("vlx2", 0), ("vlx4", 1 << 13)):
                word = 0x25204010 | bits | code << 22 | vl_bit
                ops = f"pn<d>.{size}, <n:xzr>, <m:xzr>, {vl}"
                yield f"while{cond}", word, "sme2", ops, "d@8=2:0 n=9:5 m=20:16"


def _list(reg: str, size: str, count: int) -> str:
    """A list of `count` consecutive Z registers starting at z<reg>."""
    return f"{{z<{reg}>.{size}-z<{reg}+{count - 1}>.{size}}}"


def _aligned(hi: int, count: int) -> str:
    """The bits of a list's first register, a multiple of `count`, whose top bit is `hi`."""
    low = hi - 4 + count.bit_length() - 1
    return f"{hi}:{low}" + ",!" * (count.bit_length() - 1)


def _multi_loads() -> Iterator[Row]:
    for size, (mnemonic, _, lsl) in _LD1.items():
        if size == "q":
            continue
        for count, count_bit in ((2, 0), (4, 1 << 15)):
            strided = ", ".join(f"z<t{'' if k == 0 else f'+{k * 16 // count}'}>.{size}" for k in range(count))
            lists = ((_list("t", size, count), 0, f"t={_aligned(4, count)}"),)
            lists += ((f"{{{strided}}}", 1 << 24, "t=4,!,2:0" if count == 2 else "t=4,!,!,1:0"),)
            for text, strided_bit, t_bits in lists:
                for load, store in ((mnemonic, 0), ("st1" + mnemonic[3:], 1 << 21)):
                    pred = "pn<g>/z" if not store else "pn<g>"
                    word = 0xA0000000 | _SIZE[size] << 13 | count_bit | strided_bit | store
                    common = f"g@8=12:10 n=9:5 {t_bits}"
                    imm = f"i~=19:16{',!' * (count.bit_length() - 1)}"
                    yield load, word, "sme2", f"{text}, {pred}, [<n:xsp>, <m:xzr>{lsl}]", f"{common} m=20:16"
                    yield load, word | 1 << 22, "sme2", f"{text}, {pred}, [<n:xsp>, #<i>, mul vl]", f"{common} {imm}"
                    yield load, word | 1 << 22, "sme2", f"{text}, {pred}, [<n:xsp>]", common


# mova with a group of tile slices: tile and first-slice bits (to the vectors, to the tile) per size and count;
# the first slice is a multiple of the count, a literal `0:1` / `0:3` where the tile has no other slices.
_GROUP = {
    ("b", 2): ("za0{hv}.b[w<s>, <o>:<o+1>]", "o=7:5,!", "o=2:0,!"),
    ("b", 4): ("za0{hv}.b[w<s>, <o>:<o+3>]", "o=6:5,!,!", "o=1:0,!,!"),
    ("h", 2): ("za<t>{hv}.h[w<s>, <o>:<o+1>]", "t=7 o=6:5,!", "t=2 o=1:0,!"),
    ("h", 4): ("za<t>{hv}.h[w<s>, <o>:<o+3>]", "t=6 o=5,!,!", "t=1 o=0,!,!"),
    ("s", 2): ("za<t>{hv}.s[w<s>, <o>:<o+1>]", "t=7:6 o=5,!", "t=2:1 o=0,!"),
    ("s", 4): ("za<t>{hv}.s[w<s>, 0:3]", "t=6:5", "t=1:0"),
    ("d", 2): ("za<t>{hv}.d[w<s>, 0:1]", "t=7:5", "t=2:0"),
    ("d", 4): ("za<t>{hv}.d[w<s>, 0:3]", "t=7:5", "t=2:0"),
}


def _mova_multi() -> Iterator[Row]:
    for (size, count), (group, to_vectors, to_tiles) in _GROUP.items():
        vectors = _list("z", size, count)
        count_bit = 1 << 10 if count == 4 else 0
        for hv, v_bit in _HV:
            tiles = group.format(hv=hv)
            word = _SIZE[size] << 22 | count_bit | v_bit
            for mova in ("mova", "mov"):
                yield (
                    mova,
                    0xC0060000 | word,
                    "sme2",
                    f"{vectors}, {tiles}",
                    f"s@12=14:13 z={_aligned(4, count)} {to_vectors}",
                )
                yield (
                    mova,
                    0xC0040000 | word,
                    "sme2",
                    f"{tiles}, {vectors}",
                    f"s@12=14:13 z={_aligned(9, count)} {to_tiles}",
                )
    for size in _SIZE:
        for count in (2, 4):
            vectors = _list("z", size, count)
            count_bit = 1 << 10 if count == 4 else 0
            for vgx in (f", vgx{count}", ""):
                array = f"za.{size}[w<s>, <o>{vgx}]"
                for mova in ("mova", "mov"):
                    to_vec = 0xC0060800 | count_bit
                    yield mova, to_vec, "sme2", f"{vectors}, {array}", f"s@8=14:13 o=7:5 z={_aligned(4, count)}"
                    to_za = 0xC0040800 | count_bit
                    yield mova, to_za, "sme2", f"{array}, {vectors}", f"s@8=14:13 o=2:0 z={_aligned(9, count)}"


# ZA array multiply-adds: ZA element size, source element size, then the fixed bits of the multi-and-single,
# multi-and-multi (None: no such form) and multi-and-indexed forms for vgx2 (vgx4 sets a bit more in each), and
# the index bits.
_ARRAY = [
    ("fmla", "s", "s", 0xC1201800, 0xC1A01800, 0xC1500000, "11:10"),
    ("fmls", "s", "s", 0xC1201808, 0xC1A01808, 0xC1500010, "11:10"),
    ("fmla", "d", "d", 0xC1601800, 0xC1E01800, 0xC1D00000, "10"),
    ("fmls", "d", "d", 0xC1601808, 0xC1E01808, 0xC1D00010, "10"),
    ("bfdot", "s", "h", 0xC1201010, 0xC1A01010, 0xC1501018, "11:10"),
    ("fdot", "s", "h", 0xC1201000, 0xC1A01000, 0xC1501008, "11:10"),
    ("sdot", "s", "b", 0xC1201400, 0xC1A01400, 0xC1501020, "11:10"),
    ("udot", "s", "b", 0xC1201410, 0xC1A01410, 0xC1501030, "11:10"),
    ("usdot", "s", "b", 0xC1201408, 0xC1A01408, 0xC1501028, "11:10"),
    ("sudot", "s", "b", 0xC1201418, None, 0xC1501038, "11:10"),
]


def _array() -> Iterator[Row]:
    for mnemonic, za, src, single, multi, indexed, index_bits in _ARRAY:
        for count, single_bit, multi_bit, index_bit in ((2, 0, 0, 0), (4, 1 << 20, 1 << 16, 1 << 15)):
            vectors = _list("n", src, count)
            for vgx in (f", vgx{count}", ""):
                array = f"za.{za}[w<v>, <o>{vgx}]"
                common = "v@8=14:13 o=2:0"
                yield (
                    mnemonic,
                    single | single_bit,
                    "sme2",
                    f"{array}, {vectors}, z<m>.{src}",
                    f"{common} n=9:5 m=19:16",
                )
                n_bits = f"n={_aligned(9, count)}"
                if multi is not None:
                    ops = f"{array}, {vectors}, {_list('m', src, count)}"
                    yield mnemonic, multi | multi_bit, "sme2", ops, f"{common} {n_bits} m={_aligned(20, count)}"
                ops = f"{array}, {vectors}, z<m>.{src}[<i>]"
                yield mnemonic, indexed | index_bit, "sme2", ops, f"{common} {n_bits} m=19:16 i={index_bits}"


def _lookups() -> Iterator[Row]:
    for size in ("b", "h", "s"):
        sz = _SIZE[size] << 12
        yield "luti4", 0xC0CA0000 | sz, "sme2", f"z<d>.{size}, zt0, z<n>[<i>]", "d=4:0 n=9:5 i=16:14"
        yield "luti2", 0xC0CC0000 | sz, "sme2", f"z<d>.{size}, zt0, z<n>[<i>]", "d=4:0 n=9:5 i=17:14"
        pair = f"{_list('d', size, 2)}, zt0, z<n>[<i>]"
        yield "luti4", 0xC08A4000 | sz, "sme2", pair, f"d={_aligned(4, 2)} n=9:5 i=16:15"
        yield "luti2", 0xC08C4000 | sz, "sme2", pair, f"d={_aligned(4, 2)} n=9:5 i=17:15"
        quad = f"{_list('d', size, 4)}, zt0, z<n>[<i>]"
        if size != "b":  # no four-register luti4 of bytes
            yield "luti4", 0xC08A8000 | sz, "sme2", quad, f"d={_aligned(4, 4)} n=9:5 i=16"
        yield "luti2", 0xC08C8000 | sz, "sme2", quad, f"d={_aligned(4, 4)} n=9:5 i=17:16"


def _clamps_and_conversions() -> Iterator[Row]:
    for mnemonic, base, sizes in (("fclamp", 0xC120C000, "hsd"), ("sclamp", 0xC120C400, "bhsd")):
        for size in sizes:
            for count in (2, 4):
                ops = f"{_list('d', size, count)}, z<n>.{size}, z<m>.{size}"
                fields = f"d={_aligned(4, count)} n=9:5 m=20:16"
                word = base | _SIZE[size] << 22 | (1 << 11 if count == 4 else 0)
                yield mnemonic, word, "sme2", ops, fields
                if mnemonic == "sclamp":
                    yield "uclamp", word | 1, "sme2", ops, fields
    for mnemonic, base in (
        ("bfcvt", 0xC160E000),
        ("fcvt", 0xC120E000),
        ("bfcvtn", 0xC160E020),
        ("fcvtn", 0xC120E020),
        ("sqcvt", 0xC123E000),
        ("uqcvt", 0xC123E020),
        ("sqcvtu", 0xC163E000),
    ):
        yield mnemonic, base, "sme2", f"z<d>.h, {_list('n', 's', 2)}", f"d=4:0 n={_aligned(9, 2)}"
    for mnemonic, base in (("sqcvt", 0xC133E000), ("uqcvt", 0xC133E020), ("sqcvtu", 0xC173E000)):
        for dst, src, size_bits in (("b", "s", 0), ("h", "d", 1 << 23)):
            ops = f"z<d>.{dst}, {_list('n', src, 4)}"
            yield mnemonic, base | size_bits, "sme2", ops, f"d=4:0 n={_aligned(9, 4)}"


def rows() -> Iterator[Row]:
    """Every SME and SME2 form as a row, in table order."""
    for raw in _SIMPLE.strip().splitlines():
        head, ops, fields = raw.split("|")
        mnemonic, base, feature = head.split()
        yield mnemonic, int(base, 16), feature, ops.strip(), fields.strip()
    for family in (_outer, _tile_slices, _predicates, _multi_loads, _mova_multi, _array, _lookups):
        yield from family()
    yield from _clamps_and_conversions()
