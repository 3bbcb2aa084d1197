"""The SME and SME2 forms of the `.inst` encoder (src/isaforge/inst_sme.py) against llvm-mc-19 and GNU as 2.40.

Cross-check, as tests/test_inst.py does for the other forms: for every form, every value of every placeholder (each
register, tile, slice, offset, index, immediate) with the others fixed, plus seeded random combinations; `zero`
with every mask. All of it in one llvm-mc call (-show-encoding), the SME1 forms also through GNU as 2.40, which
knows no SME2. Round trip: the rewritten file assembles with GNU as for plain armv8-a, gives our words, and
llvm-objdump prints instructions that llvm-mc assembles back to the same words. Out of range: values just outside
each placeholder's range are Malformed for us and rejected by llvm-mc. Ordinary uses of the shared mnemonics
(`ld1w {z0.s}, p0/z, [x0]`, `mov x0, x1`, …) pass untouched.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from isaforge import inst, inst_sme
from isaforge.inst_encoding import InstError
from isaforge.inst_sme import Form, Slot
from tests.test_inst import run, text_section, words

LLVM_MC = "llvm-mc-19"
LLVM_OBJDUMP = "llvm-objdump-19"
GAS = "aarch64-linux-gnu-as"
MATTR = "+sme2p1,+sme-i16i64,+sme-f64f64,+sme-f16f16,+sme-b16b16,+sme-lutv2"
MC_FULL = ["-triple=aarch64", f"-mattr={MATTR}"]
GAS_SME1 = ["-march=armv9-a+sme+sme-i64+sme-f64"]  # GNU as 2.40's names for FEAT_SME_I16I64 / FEAT_SME_F64F64
GAS_OLD = ["-march=armv8-a"]
SAMPLES = 8

pytestmark = [
    pytest.mark.skipif(
        any(shutil.which(t) is None for t in (LLVM_MC, LLVM_OBJDUMP, GAS)),
        reason="llvm-mc-19 / aarch64 binutils missing (ci/install-toolchains.sh)",
    ),
    pytest.mark.xdist_group("inst-sme"),  # one worker computes the module's cases once
]


# -- the cases ------------------------------------------------------------------------------------------------


def _fixed(form: Form, rng: random.Random) -> dict[str, int]:
    return {s.name: rng.choice(form.domain(s)) for s in form.placeholders()}


def form_cases(form: Form, rng: random.Random) -> list[dict[str, int]]:
    """Each placeholder through its whole range with the others fixed, then SAMPLES random combinations."""
    fixed = _fixed(form, rng)
    out = [{**fixed, slot.name: value} for slot in form.placeholders() for value in form.domain(slot)]
    out += [_fixed(form, rng) for _ in range(SAMPLES)]
    return out or [{}]


def zero_cases(rng: random.Random) -> list[tuple[str, int]]:
    """`zero` with every mask written as .d tiles, each .s/.h/.b tile alone, random .s and .h lists, `{za}`, `{}`."""
    out = [("zero {za}", 0xFF), ("zero {}", 0)]
    for mask in range(1, 256):
        tiles = [f"za{t}.d" for t in range(8) if mask >> t & 1]
        out.append((f"zero {{{', '.join(tiles)}}}", mask))
    for size, count, pattern in (("s", 4, 0x11), ("h", 2, 0x55), ("b", 1, 0xFF)):
        out += [(f"zero {{za{t}.{size}}}", pattern << t) for t in range(count)]
        for _ in range(SAMPLES):
            tiles = sorted(rng.sample(range(count), rng.randint(1, count)))
            mask = 0
            for t in tiles:
                mask |= pattern << t
            out.append((f"zero {{{', '.join(f'za{t}.{size}' for t in tiles)}}}", mask))
    return [(text, 0xC0080000 | mask) for text, mask in out]


def outside(form: Form, slot: Slot) -> list[int]:
    """Values just outside a placeholder's range: below, above, in its gaps (misaligned, between strided runs)."""
    domain = form.domain(slot)
    near = {domain[0] - 1, domain[-1] + 1} | {v + 1 for v in domain} | {v - 1 for v in domain}
    bad = sorted(v for v in near - set(domain) if v >= 0 or not slot.prefix[-1:].isalpha())
    if slot.kind != "#":
        bad = []  # X registers: x31 is checked in BAD below (llvm-mc takes it as xzr, GNU as does not)
    return bad[:2] + bad[-2:] if len(bad) > 4 else bad


class Checked:
    """Everything the tools say about the SME cases, computed once."""

    def __init__(self, tmp: Path) -> None:
        rng = random.Random("isaforge-inst-sme")
        self.forms: list[Form | None] = []
        self.texts: list[str] = []
        for form in inst_sme.forms():
            for values in form_cases(form, rng):
                self.forms.append(form)
                self.texts.append(form.text(values))
        zeros = zero_cases(rng)
        self.forms += [None] * len(zeros)
        self.texts += [t for t, _ in zeros]
        self.zero_words = [w for _, w in zeros]
        self.source = "".join(f"{t}\n" for t in self.texts)
        self.rewritten = inst.rewrite("aarch64", self.source, "cases.S")
        self.ours = [int(line[6:16], 16) for line in self.rewritten.split("\n")[:-1]]
        self.llvm_words = llvm_encodings(self.source, tmp)
        self.sme1 = [i for i, f in enumerate(self.forms) if f is None or f.feature != "sme2"]
        sme1_source = "".join(f"{self.texts[i]}\n" for i in self.sme1)
        self.gas_words = words(text_section(gas(sme1_source, tmp, "sme1", GAS_SME1)))
        old = gas(self.rewritten, tmp, "old", GAS_OLD)
        self.old_words = words(text_section(old))
        self.disassembled = objdump(old)
        self.reassembled = llvm_encodings("".join(f"{t}\n" for t in self.disassembled), tmp)

    def mismatches(self, theirs: list[int], which: list[int] | None = None) -> list[str]:
        which = list(range(len(self.texts))) if which is None else which
        assert len(theirs) == len(which), (len(theirs), len(which))
        return [
            f"{self.texts[i]}: ours {self.ours[i]:#010x}, theirs {w:#010x}"
            for i, w in zip(which, theirs, strict=True)
            if self.ours[i] != w
        ]


def gas(source: str, tmp: Path, name: str, flags: list[str]) -> Path:
    src, obj = tmp / f"{name}.s", tmp / f"{name}.o"
    src.write_text(source)
    run(GAS, *flags, src, "-o", obj)
    return obj


def llvm_encodings(source: str, tmp: Path) -> list[int]:
    src = tmp / "mc.s"
    src.write_text(source)
    out = run(LLVM_MC, *MC_FULL, "-show-encoding", src).stdout
    return [
        int.from_bytes(bytes(int(b, 16) for b in e.split(",")), "little")
        for e in re.findall(r"encoding: \[([^]]*)\]", out)
    ]


def objdump(obj: Path) -> list[str]:
    out = run(LLVM_OBJDUMP, "-d", f"--mattr={MATTR}", obj).stdout
    return [r.strip() for r in re.findall(r"^\s*[0-9a-f]+:\s+[0-9a-f]{8}\s+(.*)$", out, re.M)]


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> Checked:
    return Checked(tmp_path_factory.mktemp("inst-sme"))


# -- cross-check and round trip -------------------------------------------------------------------------------


def test_every_case_encodes(checked: Checked):
    assert all(isinstance(w, int) for w in checked.ours)
    assert checked.ours[-len(checked.zero_words) :] == checked.zero_words
    assert {f.mnemonic for f in checked.forms if f is not None} == set(inst_sme.FORMS)
    assert len(checked.texts) > 10000


def test_words_equal_llvm_mc(checked: Checked):
    assert checked.mismatches(checked.llvm_words) == []


def test_sme1_words_equal_gnu_as(checked: Checked):
    assert len(checked.sme1) > 2000
    assert checked.mismatches(checked.gas_words, checked.sme1) == []


def test_rewritten_builds_for_armv8_a_and_disassembles_to_the_originals(checked: Checked):
    assert checked.mismatches(checked.old_words) == []
    assert not [t for t in checked.disassembled if "unknown" in t or ".inst" in t]
    assert checked.mismatches(checked.reassembled) == []
    lines = checked.rewritten.split("\n")
    assert len(lines) == len(checked.texts) + 1
    for line, text, word in zip(lines, checked.texts, checked.ours, strict=False):
        assert line == f".inst 0x{word:08x}  // {text}"


def test_values_out_of_range_are_malformed_here_and_rejected_by_llvm_mc(tmp_path):
    rng = random.Random("isaforge-inst-sme-bad")
    texts = []
    for form in inst_sme.forms():
        fixed = _fixed(form, rng)
        for slot in form.placeholders():
            texts += [form.text({**fixed, slot.name: value}) for value in outside(form, slot)]
    assert len(texts) > 1000
    not_malformed = []
    for text in texts:
        try:
            inst.encode_line("aarch64", text)
            not_malformed.append(text)
        except InstError:
            pass
    assert not_malformed == []
    src = tmp_path / "bad.s"
    src.write_text("".join(f"{t}\n" for t in texts))
    proc = run_failing(LLVM_MC, *MC_FULL, "-show-encoding", src)
    rejected = {int(n) for n in re.findall(r"^[^:\n]*bad\.s:(\d+):\d+: error:", proc.stderr, re.M)}
    assert [t for n, t in enumerate(texts, 1) if n not in rejected] == []


def run_failing(*cmd: str | Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    return proc


# -- the table ------------------------------------------------------------------------------------------------


def test_fields_are_disjoint_and_clear_of_the_fixed_bits():
    for form in inst_sme.forms():
        seen = form.base
        for field in form.fields.values():
            bits = [b for b in field.bits if b is not None]
            mask = sum(1 << b for b in bits)
            assert len(set(bits)) == len(bits) and not seen & mask, form
            seen |= mask


def test_no_two_forms_read_the_same_text():
    """Each form's own texts pick that form: the first form that fits is the only one."""
    for name, group in inst_sme.FORMS.items():
        keys = [(f.base, tuple(t.text for t in f.operands)) for f in group]
        assert len(keys) == len(set(keys)), name


# -- which lines are ours -------------------------------------------------------------------------------------

ORDINARY = [
    "ld1w {z0.s}, p0/z, [x0]",
    "ld1w {z1.s}, p1/z, [x0, x1, lsl #2]",
    "ld1b {z0.b}, p0/z, [x0, #1, mul vl]",
    "st1w {z0.s}, p0, [x0, x1, lsl #2]",
    "st1d {z0.d}, p0, [x0]",
    "ptrue p0.s",
    "ptrue p0.b, vl4",
    "mov x0, x1",
    "mov z0.d, z1.d",
    "mov v0.16b, v1.16b",
    "fmla z0.s, p0/m, z1.s, z2.s",
    "fmla v0.4s, v1.4s, v2.s[0]",
    "fmls z0.s, p0/m, z1.s, z2.s",
    "whilelt p0.s, x0, x1",
    "whilelo p0.b, w0, w1",
    "ldr x0, [x1]",
    "ldr z0, [x0]",
    "ldr p0, [x0, #1, mul vl]",
    "str q0, [x1], #16",
    "str z0, [x0, #1, mul vl]",
    "fclamp z0.s, z1.s, z2.s",
    "sclamp z0.s, z1.s, z2.s",
    "fcvt z0.h, p0/m, z1.s",
    "fdot z0.s, z1.h, z2.h",
    "ld1d {z0.d}, p0/z, [x0, z1.d, lsl #3]",
]


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_uses_of_shared_mnemonics_pass_untouched(line):
    text = f"\t{line}  // ordinary\n"
    assert inst.encode_line("aarch64", line) is None
    assert inst.rewrite("aarch64", text, "k.S") == text


def test_ordinary_lines_are_real_instructions(tmp_path):
    src = tmp_path / "ordinary.s"
    src.write_text("".join(f"{t}\n" for t in ORDINARY))
    run(LLVM_MC, *MC_FULL, "-mattr=+sve2p1", "-filetype=obj", src, "-o", tmp_path / "ordinary.o")


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ("SMSTART", 0xD503477F),
        ("smstop\tZA", 0xD503447F),
        ("1: FMOPA ZA3.S, P7/M, P6/M, Z31.S, Z30.S // c", 0x809EDFE3),
        ("ld1w { za3h.s [ w14 , 3 ] } , p0/z , [ x0 , x1 , lsl #2 ]", 0xE081400F),
        ("ld1w {z0.s, z1.s, z2.s, z3.s}, pn8/z, [x0, #-32, mul vl]", 0xA048C000),
        ("ld1w {z0.s - z3.s}, pn8/z, [x0, #-32, MUL VL]", 0xA048C000),
        ("fmla za.s[w11, 7, vgx2], {z31.s, z0.s}, z15.s", 0xC12F7BE7),
        ("fmla za.s[w11, 7], {z31.s-z0.s}, z15.s", 0xC12F7BE7),
        ("mov za0h.s[w12, 0], p0/m, z0.s", 0xC0800000),
        ("mova za0h.s[w12, 0], p0/m, z0.s", 0xC0800000),
        ("zero {za0.d, za2.d}", 0xC0080005),
        ("zero {za0.b}", 0xC00800FF),
        ("zero { zt0 }", 0xC0480001),
        ("ldr za[w13, 3], [sp, #3, mul vl]", 0xE10023E3),
        ("luti4 {z0.b-z1.b}, zt0, z0[2]", 0xC08B4000),
    ],
)
def test_flexible_syntax(line, word):
    assert inst.encode_line("aarch64", line) == word


BAD = [
    ("fmopa za4.s, p0/m, p1/m, z0.s, z1.s", "fmopa: operand 1 `za4.s`: za4 out of range, must be za0-za3"),
    ("fmopa za0.b, p0/m, p1/m, z0.b, z1.b", "operand 1 is `za0.b`, expected za<d>.s or za<d>.d"),
    ("fmopa za0.s, p8/m, p1/m, z0.s, z1.s", "p8 out of range, must be p0-p7"),
    ("fmopa za0.s, p0/z, p1/m, z0.s, z1.s", "operand 2 is `p0/z`, expected p<n>/m after `za0.s`"),
    ("smopa za0.s, p0/m, p1/m, z0.s, z1.s", "operand 4 is `z0.s`, expected z<zn>.b or z<zn>.h"),
    ("ld1w {z1.s-z4.s}, pn8/z, [x0]", "z1 out of range, must be z0-z28 in steps of 4"),
    ("ld1w {z1.s-z2.s}, pn8/z, [x0]", "z1 out of range, must be z0-z30 in steps of 2"),
    ("ld1w {z0.s-z2.s}, pn8/z, [x0]", "operand 1 is `{z0.s-z2.s}`, expected {za<t>h.s[w<s>, <o>]} or"),
    ("ld1w {z0.s, z4.s}, pn8/z, [x0]", "operand 1 is `{z0.s, z4.s}`, expected"),
    ("ld1w {z8.s, z16.s}, pn8/z, [x0]", "z8 out of range, must be z0-z7 or z16-z23"),
    ("ld1w {z0.s-z1.s}, p0/z, [x0]", "operand 2 is `p0/z`, expected pn<g>/z"),
    ("ld1w {z0.s-z1.s}, pn7/z, [x0]", "pn7 out of range, must be pn8-pn15"),
    ("ld1w {z0.s-z1.s}, pn8/z, [x0, #1, mul vl]", "1 out of range, must be -16..14 in steps of 2"),
    ("ld1w {z0.s-z3.s}, pn8/z, [x0, #32, mul vl]", "32 out of range, must be -32..28 in steps of 4"),
    ("ld1w {z0.s-z1.s}, pn8/z, [x0, x1, lsl #3]", "expected [<Xn|SP>, <Xm|XZR>, lsl #2]"),
    ("ld1w {z0.s-z1.s}, pn8/z, [x31]", "x31 out of range, must be x0-x30 or sp"),
    ("ld1w {z0.s-z1.s}, pn8/z, [xzr]", "expected [<Xn|SP>, <Xm|XZR>, lsl #2] or"),
    ("ld1w {za4h.s[w12, 0]}, p0/z, [x0]", "za4 out of range, must be za0-za3"),
    ("ld1w {za0h.s[w11, 0]}, p0/z, [x0]", "w11 out of range, must be w12-w15"),
    ("ld1w {za0h.s[w12, 4]}, p0/z, [x0]", "4 out of range, must be 0..3"),
    ("st1w {za0h.s[w12, 0]}, p0/z, [x0]", "operand 2 is `p0/z`, expected p<g>"),
    ("ldr za[w12, 3], [x0, #2, mul vl]", "operand 2 is `[x0, #2, mul vl]`, expected"),
    ("mova {z0.s-z3.s}, za0h.s[w12, 1:4]", "expected za<t>h.s[w<s>, 0:3]"),
    ("mova {z0.h-z1.h}, za0h.h[w12, 1:2]", "1 out of range, must be 0..6 in steps of 2"),
    ("fmla za.s[w12, 0, vgx2], {z0.s-z1.s}, z0.s", "w12 out of range, must be w8-w11"),
    ("fmla za.s[w8, 8, vgx2], {z0.s-z1.s}, z0.s", "8 out of range, must be 0..7"),
    ("fmla za.s[w8, 0, vgx2], {z0.s-z1.s}, z16.s", "z16 out of range, must be z0-z15"),
    ("fmla za.s[w8, 0, vgx4], {z0.s-z1.s}, z0.s", "operand 2 is `{z0.s-z1.s}`, expected"),
    ("sdot za.s[w8, 0, vgx2], {z0.b-z1.b}, z0.b[4]", "4 out of range, must be 0..3"),
    ("sudot za.s[w8, 0, vgx2], {z0.b-z1.b}, {z2.b-z3.b}", "operand 3 is `{z2.b-z3.b}`, expected z<m>.b or"),
    ("ptrue pn7.s", "pn7 out of range, must be pn8-pn15"),
    ("whilelt pn8.s, x0, x1, vlx3", "operand 4 is `vlx3`, expected vlx2 or vlx4"),
    ("luti4 {z0.b-z3.b}, zt0, z0[0]", "operand 1 is `{z0.b-z3.b}`, expected"),
    ("rdsvl x0, #32", "32 out of range, must be -32..31"),
    ("smstart xx", "operand 1 is `xx`, expected sm or za"),
    ("zero {za8.d}", "za8.d out of range, must be za0-za7"),
    ("zero {za0.s, za1.d}", "mixes element sizes"),
    ("zero {z0.d}", "is not a tile"),
    ("mova z0.s, p0/m, z1.s", "operand 3 is `z1.s`, expected"),
    ("fmopa za0.s, p0/m, p1/m, z0.s", "fmopa takes 5 operands, got 4"),
    ("ld1w {z0.s-z1.s}, , [x0]", "operand 2 is empty"),
    ("fmopa \\acc, p0/m, p1/m, z0.s, z1.s", "operand 1 is `\\acc`, expected za<d>.s"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_malformed_stops_with_file_and_line(line, message):
    text = f"// head\n  ld1w {{z0.s}}, p0/z, [x0]\n\n    {line}\nsmstart\n"
    with pytest.raises(InstError) as info:
        inst.rewrite("aarch64", text, "dir/k.S")
    assert str(info.value).startswith("dir/k.S:4: ")
    assert message in str(info.value)
    assert (info.value.filename, info.value.line) == ("dir/k.S", 4)


def test_bad_lines_are_bad_for_llvm_mc_too(tmp_path):
    src = tmp_path / "bad.s"
    src.write_text("".join(f"{line}\n" for line, _ in BAD if "\\" not in line))
    proc = run_failing(LLVM_MC, *MC_FULL, src)
    rejected = {int(n) for n in re.findall(r"bad\.s:(\d+):\d+: error:", proc.stderr)}
    lines = [line for line, _ in BAD if "\\" not in line]
    # llvm-mc takes x31 as xzr; GNU as rejects it as we do
    assert [t for n, t in enumerate(lines, 1) if n not in rejected and "x31" not in t] == []


SOURCE = """\
    .text
kernel:
    smstart
    ptrue pn8.s
    zero {za}
1:  ld1w {z0.s-z3.s}, pn8/z, [x1]; ld1w {z4.s-z7.s}, pn8/z, [x2, #4, mul vl]
    fmopa za0.s, p0/m, p1/m, z0.s, z4.s    // SME1
    fmla za.s[w8, 0, vgx4], {z0.s-z3.s}, {z4.s-z7.s}
    ld1w {z8.s}, p0/z, [x0]                 // SVE: untouched
    mova {z0.s-z3.s}, za0h.s[w12, 0:3]
    st1w {z0.s-z3.s}, pn8, [x3, x4, lsl #2]
    subs x5, x5, #1
    b.ne 1b
    smstop
    ret
"""


def test_a_kernel_builds_for_armv8_a_as_it_does_with_sme2(tmp_path):
    (tmp_path / "orig.s").write_text(SOURCE)
    run(LLVM_MC, *MC_FULL, "-mattr=+sve", "-filetype=obj", tmp_path / "orig.s", "-o", tmp_path / "orig.o")
    rewritten = inst.rewrite("aarch64", SOURCE, "k.S")
    assert rewritten.count(".inst") == 10
    assert "    ld1w {z8.s}, p0/z, [x0]                 // SVE: untouched\n" in rewritten
    (tmp_path / "inst.s").write_text(rewritten.replace("ld1w {z8.s}, p0/z, [x0]", ".inst 0xa540a008"))
    run(GAS, *GAS_OLD, tmp_path / "inst.s", "-o", tmp_path / "inst.o")
    assert text_section(tmp_path / "orig.o") == text_section(tmp_path / "inst.o")
