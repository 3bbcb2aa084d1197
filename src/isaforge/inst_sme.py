"""The SME and SME2 forms of the `.inst` encoder (aarch64): ZA tiles, ZA array vectors, ZT0, predicate-as-counter
registers and multi-vector lists. inst.py asks `claims()` first and then `encode()`; the other forms are in
inst_encoding.py.

SME instructions share mnemonics with ordinary ones (`ld1w`, `mov`, `ptrue`, `fmla`, `sdot`, …). A line is ours when
its mnemonic exists only in SME (`fmopa`, `mova`, `smstart`, …) or when its operands are SME-shaped: they name ZA
(`za`, `za0h.s[…]`, `za.s[…]`), ZT0, a `pn` register or a list of several Z registers. Such a line must match one of
the forms (their rows are in inst_sme_table.py), else it is Malformed (wrong shape, register or immediate out of
range, misaligned list); any other line is left for inst_encoding.py, or untouched when that has no form either.

A form's row writes its operands as the assembler spells them, with `<name>` placeholders for the numbers it
carries; each placeholder has a field (its instruction bits, most significant first; `!` is a value bit that must be
0 and is not stored, as for the aligned first register of a list or a scaled immediate). `<name+k>` is not stored
but must equal name+k (the last register of a list, the last slice of a group). `<n:xsp>`, `<n:xzr>`: an X register,
or SP / XZR as 31.

Standard library only: Meson runs inst.py, and so this module, from a bare source tree.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from isaforge.inst_encoding import Malformed, check_count, check_not_empty, mismatch
from isaforge.inst_sme_table import Row, rows

# -- fields and placeholders ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """Where a placeholder's value goes: `bits` (None for a value bit that must be 0), signedness, register base."""

    bits: tuple[int | None, ...]
    signed: bool = False
    base: int = 0

    def domain(self) -> list[int]:
        """Every value the field takes, in order."""
        return list(_domain(self))

    def place(self, value: int) -> int:
        raw, width, word = value - self.base, len(self.bits), 0
        for i, bit in enumerate(self.bits):
            if bit is not None and raw >> (width - 1 - i) & 1:
                word |= 1 << bit
        return word


@functools.cache
def _domain(field: Field) -> tuple[int, ...]:
    width = len(field.bits)
    low, high = (-(1 << width - 1), (1 << width - 1) - 1) if field.signed else (0, (1 << width) - 1)
    zero = sum(1 << (width - 1 - i) for i, b in enumerate(field.bits) if b is None)
    return tuple(v + field.base for v in range(low, high + 1) if not (v & zero))


@functools.cache
def _holds(field: Field) -> frozenset[int]:
    return frozenset(_domain(field))


def _parse_field(text: str) -> tuple[str, Field]:
    """`name[~][@base]=hi:lo,b,!,…`; `~` signed, `@base` subtracted first (`w<s>` with s@12 holds w12-w15)."""
    m = re.fullmatch(r"(\w+?)(~)?(?:@(\d+))?=([\d:,!]+)", text)
    if m is None:
        raise ValueError(f"bad field {text!r}")
    bits: list[int | None] = []
    for part in m[4].split(","):
        if part == "!":
            bits.append(None)
        elif ":" in part:
            hi, lo = map(int, part.split(":"))
            bits += range(hi, lo - 1, -1)
        else:
            bits.append(int(part))
    return m[1], Field(tuple(bits), bool(m[2]), int(m[3] or 0))


@dataclass(frozen=True)
class Slot:
    """One number of an operand's template: a placeholder (stored or derived) or a literal."""

    name: str | None  # None for a literal
    kind: str  # "#" a number, "xsp" / "xzr" / "x" an X register
    prefix: str  # what the template has just before it (`z`, `za`, `w`, `#`, …), for messages and wrap-around
    offset: int = 0  # for a derived placeholder: name+offset
    derived: bool = False
    literal: int | None = None

    def shows(self, value: int) -> str:
        if self.kind != "#":
            return "sp" if value == 31 and self.kind == "xsp" else "xzr" if value == 31 else f"x{value}"
        return f"{self.prefix if self.prefix[-1:].isalpha() else ''}{value}"


_X = r"(?<![a-z0-9_])(?:x\d+|sp|xzr)(?![a-z0-9_])"
_TOKEN = re.compile(rf"<(\w+)(?::(\w+))?(?:\+(\d+))?>|{_X}|-?\d+")
_NUMBER = re.compile(rf"({_X})|-?\d+")
_Value = tuple[str, int]  # ("x", n) / ("sp", 31) / ("xzr", 31) / ("#", n)


def _signature(text: str) -> tuple[str, list[_Value]]:
    """Normalised operand text with its numbers replaced by `#` and its X registers by `X`, and their values."""
    values: list[_Value] = []

    def sub(m: re.Match[str]) -> str:
        if m[1] is None:
            values.append(("#", int(m[0])))
            return "#"
        token = m[1]
        values.append(("x", int(token[1:])) if token[0] == "x" and token != "xzr" else (token, 31))
        return "X"

    return _NUMBER.sub(sub, text), values


@dataclass(frozen=True)
class Template:
    """One operand of a form: its normalised text, signature and slots."""

    text: str  # as written in the table (spaces kept), for generated test lines and messages
    signature: str
    slots: tuple[Slot, ...]

    @classmethod
    def parse(cls, text: str) -> Template:
        norm = _normalise(text)
        slots: list[Slot] = []
        out, pos = [], 0
        for m in _TOKEN.finditer(norm):
            prefix = re.search(r"[a-z#]*$", norm[: m.start()])
            before = prefix.group() if prefix else ""
            if m[0].startswith("<"):
                kind = m[2] or "#"
                slots.append(Slot(m[1], kind, before, int(m[3] or 0), m[3] is not None))
                out += [norm[pos : m.start()], "#" if kind == "#" else "X"]
            elif m[0][0] in "xs" or m[0] == "xzr":
                raise ValueError(f"literal X register in template {text!r}")
            else:
                slots.append(Slot(None, "#", before, literal=int(m[0])))
                out += [norm[pos : m.start()], "#"]
            pos = m.end()
        out.append(norm[pos:])
        return cls(text.strip(), "".join(out), tuple(slots))

    def shape(self) -> str:
        """How the operand is written, for messages: `za<d>.s`, `[<Xn|SP>, <m>, lsl #2]`."""
        names = {"xsp": "<X{}|SP>", "xzr": "<X{}|XZR>", "x": "<X{}>"}
        return re.sub(
            r"<(\w+)(?::(\w+))?(\+\d+)?>",
            lambda m: names[m[2]].format(m[1]) if m[2] else f"<{m[1]}{m[3] or ''}>",
            self.text,
        )


def _normalise(text: str) -> str:
    return re.sub(r"\s+", "", text.lower())


# -- forms ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    mnemonic: str
    base: int
    operands: tuple[Template, ...]
    fields: dict[str, Field]
    feature: str  # "sme", "sme-i16i64", "sme-f64f64" (GNU as 2.40 knows these) or "sme2"

    def placeholders(self) -> list[Slot]:
        return [s for t in self.operands for s in t.slots if s.name is not None and not s.derived]

    def domain(self, slot: Slot) -> list[int]:
        values = self.fields[slot.name].domain() if slot.name in self.fields else []
        if slot.kind in ("xsp", "xzr"):
            values = [v for v in values if v < 31] + [31]
        elif slot.kind == "x":
            values = [v for v in values if v < 31]
        return values

    def encode(self, values: dict[str, int]) -> int:
        word = self.base
        for name, field in self.fields.items():
            word |= field.place(values[name])
        return word

    def text(self, values: dict[str, int]) -> str:
        """The instruction written out for `values` (a value per stored placeholder)."""

        def sub(m: re.Match[str]) -> str:
            slot = Slot(m[1], m[2] or "#", "")
            value = _derive(values[m[1]], int(m[3] or 0), _prefix_of(m.string, m.start()))
            return slot.shows(value) if slot.kind != "#" else str(value)

        ops = ", ".join(re.sub(r"<(\w+)(?::(\w+))?(?:\+(\d+))?>", sub, t.text) for t in self.operands)
        return f"{self.mnemonic} {ops}".strip()


def _prefix_of(text: str, end: int) -> str:
    m = re.search(r"[a-z#]*$", text[:end])
    return m.group() if m else ""


def _derive(value: int, offset: int, prefix: str) -> int:
    """name+offset; Z register numbers wrap (a list `{z31.s, z0.s}` is consecutive)."""
    return (value + offset) % 32 if prefix == "z" and offset else value + offset


def _form(row: Row) -> Form:
    mnemonic, base, feature, ops, fields = row
    operands = tuple(Template.parse(t) for t in split_operands(ops)) if ops else ()
    parsed = dict(_parse_field(f) for f in fields.split())
    names = {s.name for t in operands for s in t.slots if s.name is not None and not s.derived}
    if names != set(parsed):
        raise ValueError(f"placeholders {sorted(names)} and fields {sorted(parsed)} differ in {row}")
    return Form(mnemonic, base, operands, parsed, feature)


def _load() -> dict[str, tuple[Form, ...]]:
    table: dict[str, list[Form]] = {}
    for row in rows():
        table.setdefault(row[0], []).append(_form(row))
    return {name: tuple(group) for name, group in table.items()}


# -- operands ---------------------------------------------------------------------------------------------------


def split_operands(text: str) -> list[str]:
    """Operands separated by the commas outside `{}` and `[]`, stripped."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out if any(out) or len(out) > 1 else []


_ELEMENT = re.compile(r"z(\d+)(\.[a-z])?(?:-z(\d+)(\.[a-z])?)?")


def _canonical_list(norm: str) -> str:
    """`{z0.s,z1.s}` and `{z0.s-z1.s}` alike as `{z0.s-z1.s}`: a list of consecutive Z registers (wrapping after
    z31) of one element size is written as a range. Other lists are kept as written."""
    if not (norm.startswith("{") and norm.endswith("}")):
        return norm
    regs: list[tuple[int, str]] = []
    for element in norm[1:-1].split(","):
        m = _ELEMENT.fullmatch(element)
        if m is None or (m[3] is not None and m[2] != m[4]):
            return norm
        first, last = int(m[1]), int(m[3] if m[3] is not None else m[1])
        if max(first, last) > 31:  # left for the range check to report
            return norm
        regs += [((first + k) % 32, m[2] or "") for k in range((last - first) % 32 + 1)]
    consecutive = all(b == ((a + 1) % 32, s) for (a, s), b in itertools.pairwise(regs))
    if len(regs) < 2 or not consecutive:
        return norm
    (first, size), (last, _) = regs[0], regs[-1]
    return f"{{z{first}{size}-z{last}{size}}}"


_SME_SHAPED = re.compile(r"(?<![a-z0-9_])(?:za|zt\d|pn\d)|\{[^}]*z\d+[^}]*[-,][^}]*\}")


def claims(mnemonic: str, operand_text: str) -> bool:
    """Whether the instruction is for this module: an SME-only mnemonic, or SME-shaped operands (see above)."""
    if mnemonic not in FORMS:
        return False
    return mnemonic in SME_ONLY or _SME_SHAPED.search(_normalise(operand_text)) is not None


@dataclass(frozen=True)
class _Operand:
    text: str
    signature: str
    values: tuple[_Value, ...]


@functools.lru_cache(maxsize=4096)  # kernels repeat their operands (`p0/m`, `[x0]`, `{z0.s-z3.s}`) many times
def _operand(text: str) -> _Operand:
    signature, values = _signature(_canonical_list(_normalise(text)))
    return _Operand(text, signature, tuple(values))


# What each kind of slot reads: a number, or which X register spellings (SP or XZR as register 31).
_ACCEPTS = {"#": ("#",), "x": ("x",), "xsp": ("x", "sp"), "xzr": ("x", "xzr")}


def _fits(form: Form, ops: Sequence[_Operand]) -> tuple[int, dict[str, _Value]]:
    """How many operands fit the form's shapes (all of them: -1) and the placeholder values read so far."""
    bound: dict[str, _Value] = {}
    for position, (op, template) in enumerate(zip(ops, form.operands, strict=True)):
        if op.signature != template.signature:
            return position, bound
        for slot, (kind, value) in zip(template.slots, op.values, strict=True):
            if slot.literal is not None:
                ok = value == slot.literal
            elif slot.derived:
                ok = value == _derive(bound[slot.name][1], slot.offset, slot.prefix)
            else:
                ok = kind in _ACCEPTS[slot.kind]
                bound[slot.name] = (kind, value)
            if not ok:
                return position, bound
    return -1, bound


def encode(mnemonic: str, operand_text: str) -> int:
    """The word for an instruction that claims() accepted; Malformed when it fits no form."""
    texts = split_operands(operand_text)
    check_not_empty(mnemonic, texts)
    if mnemonic == "zero" and len(texts) == 1 and _normalise(texts[0]) != "{zt0}":
        return 0xC0080000 | zero_mask(texts[0])
    group = FORMS[mnemonic]
    check_count(mnemonic, [len(f.operands) for f in group], texts, operand_text)
    ops = [_operand(t) for t in texts]
    for form in _BY_SIGNATURE.get((mnemonic, tuple(op.signature for op in ops)), ()):
        position, bound = _fits(form, ops)
        if position == -1:
            return form.encode(_check_ranges(mnemonic, form, ops, bound))
    candidates = [f for f in group if len(f.operands) == len(ops)]
    reached = {id(f): _fits(f, ops) for f in candidates}
    for form in candidates:
        position, bound = reached[id(form)]
        if position == -1:
            return form.encode(_check_ranges(mnemonic, form, ops, bound))
    best = max(position for position, _ in reached.values())
    shapes = [f.operands[best].shape() for f in candidates if reached[id(f)][0] == best]
    raise mismatch(mnemonic, texts, best, shapes)


def _check_ranges(mnemonic: str, form: Form, ops: Sequence[_Operand], bound: dict[str, _Value]) -> dict[str, int]:
    """The placeholder values, each checked against what its field holds."""
    for position, (op, template) in enumerate(zip(ops, form.operands, strict=True), 1):
        for slot in template.slots:
            if slot.name is None or slot.derived:
                continue
            kind, value = bound[slot.name]
            if value in _holds(form.fields[slot.name]) and (kind != "x" or value < 31):
                continue
            domain = form.domain(slot)
            if (kind == "x" and value >= 31) or value not in domain:
                shown = f"x{value}" if kind == "x" else slot.shows(value)
                raise Malformed(
                    f"{mnemonic}: operand {position} `{op.text}`: {shown} out of range, "
                    f"must be {_describe(slot, domain)}"
                )
    return {name: value for name, (_, value) in bound.items()}


def _describe(slot: Slot, domain: Sequence[int]) -> str:
    """`z0-z28 in steps of 4`, `z0-z7 or z16-z23`, `-32..28 in steps of 4`, `x0-x30 or sp`."""
    if slot.kind != "#":
        special = {"xsp": " or sp", "xzr": " or xzr"}.get(slot.kind, "")
        return f"x0-x{max(v for v in domain if v < 31)}{special}"
    named = slot.prefix[-1:].isalpha()
    prefix, dash = (slot.prefix, "-") if named else ("", "..")
    step = min((b - a for a, b in itertools.pairwise(domain)), default=1)
    runs: list[list[int]] = [[domain[0]]]
    for value in domain[1:]:
        if value - runs[-1][-1] == step:
            runs[-1].append(value)
        else:
            runs.append([value])
    texts = [f"{prefix}{r[0]}" if len(r) == 1 else f"{prefix}{r[0]}{dash}{prefix}{r[-1]}" for r in runs]
    return " or ".join(texts) + (f" in steps of {step}" if step > 1 else "")


# -- zero {tiles} -----------------------------------------------------------------------------------------------

# The 64-bit tiles (bits of the mask) that each tile covers: za<t>.d is bit t; za<t>.s holds rows t and t+4 of the
# .d tiles, za<t>.h every second one from t, za0.b (and `za`) all eight.
_TILES = {"d": (8, 1), "s": (4, 0x11), "h": (2, 0x55), "b": (1, 0xFF)}
_TILE = re.compile(r"za(\d+)\.([bhsd])")


def zero_mask(text: str) -> int:
    """The 8-bit mask of `zero {za}` / `zero {za0.d, za2.d}` / `zero {}`: one element size per list, as llvm-mc
    demands (GNU as too). A tile listed twice is allowed (llvm-mc warns)."""
    norm = _normalise(text)
    if not (norm.startswith("{") and norm.endswith("}")):
        raise Malformed(
            f"zero: operand 1 is `{text}`, expected {{za}}, {{zt0}} or a list of tiles like {{za0.d, za2.d}}"
        )
    body = norm[1:-1]
    if body in ("", "za"):
        return 0xFF if body else 0
    mask, sizes = 0, set()
    for tile in body.split(","):
        m = _TILE.fullmatch(tile)
        if m is None:
            raise Malformed(f"zero: `{tile}` in `{text}` is not a tile like za0.d, za1.s, za1.h or za0.b")
        number, size = int(m[1]), m[2]
        count, pattern = _TILES[size]
        if number >= count:
            raise Malformed(f"zero: `{tile}` in `{text}`: za{number}.{size} out of range, must be za0-za{count - 1}")
        sizes.add(size)
        mask |= pattern << number
    if len(sizes) > 1:
        raise Malformed(f"zero: `{text}` mixes element sizes; list tiles of one size")
    return mask


FORMS: dict[str, tuple[Form, ...]] = _load()
# Mnemonics that name nothing outside SME: any operands they take are meant for SME.
SME_ONLY = frozenset(
    name for name in FORMS if name in {"smstart", "smstop", "zero", "rdsvl", "addha", "addva", "mova"} or "mop" in name
)


def forms() -> list[Form]:
    """Every SME form, in table order (`zero` with a list of tiles is not among them: see zero_mask)."""
    return [form for group in FORMS.values() for form in group]


def _by_signature() -> dict[tuple[str, tuple[str, ...]], tuple[Form, ...]]:
    table: dict[tuple[str, tuple[str, ...]], list[Form]] = {}
    for form in forms():
        table.setdefault((form.mnemonic, tuple(t.signature for t in form.operands)), []).append(form)
    return {key: tuple(group) for key, group in table.items()}


# The forms by mnemonic and operand signatures: an instruction is tried against these first (the other forms of
# its mnemonic only to say what is wrong).
_BY_SIGNATURE = _by_signature()
