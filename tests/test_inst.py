"""The `.inst` encoder (src/isaforge/inst.py) against the real assemblers and disassemblers.

Cross-check: for every supported form (mnemonic x operand shape) of both architectures, every register number of
every operand is enumerated with the other operands fixed, every lane index likewise, plus 40 random combinations
of all operands per form (seeded). The full product is not enumerated (up to 32^3 x 8 per form); the fields are
independent bit ranges, which the independent sweeps and the disjoint-fields check below pin down. All of it goes
through one assembler call per tool and architecture:

* GNU as 2.40 (+ reading .text of the object) and llvm-mc-19 (-show-encoding) must give our word for every line;
* GNU objdump must print our input text back for the assembler's word (so our spelling is the canonical one);
* the rewritten file (`.inst 0x…  // original`) assembles with GNU as and llvm-mc *without* the extensions
  (armv8-a, armv7-a+neon), gives the same words and disassembles to the original instruction (round trip).

Sampled only: Thumb state (one instance of every arm form), the gcc-preprocessed .S sources at the end.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge import inst, inst_encoding
from isaforge.inst_encoding import Form, InstError

REPO = Path(inst.__file__).resolve().parents[2]
SCRIPT = REPO / "src" / "isaforge" / "inst.py"

GNU = {"aarch64": "aarch64-linux-gnu", "arm": "arm-linux-gnueabihf"}
GAS_FULL = {
    "aarch64": ["-march=armv8.6-a+sve+i8mm+bf16"],
    "arm": ["-march=armv8.6-a+i8mm", "-mfpu=neon-fp-armv8"],
}
GAS_OLD = {"aarch64": ["-march=armv8-a"], "arm": ["-march=armv7-a", "-mfpu=neon"]}
LLVM_MC = "llvm-mc-19"
MC_FULL = {
    "aarch64": ["-triple=aarch64", "-mattr=+dotprod,+i8mm,+bf16,+sve,+sve2"],
    "arm": ["-triple=armv8.6a", "-mattr=+dotprod,+i8mm,+bf16,+neon"],
}
MC_OLD = {"aarch64": ["-triple=aarch64"], "arm": ["-triple=armv7a"]}
PRELUDE = {"aarch64": "", "arm": ".syntax unified\n.arm\n"}
SAMPLES = 40

TOOLS = [f"{GNU[a]}-{t}" for a in GNU for t in ("as", "objdump", "gcc")] + [LLVM_MC]
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS), reason="cross binutils/llvm-mc missing (ci/install-toolchains.sh)"
)


# -- tools ----------------------------------------------------------------------------------------------------


def run(*cmd: str | Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stderr[:3000]}"
    return proc


# ELF class -> (e_shoff format and offset, offset of e_shentsize/e_shnum/e_shstrndx, section header format)
ELF_LAYOUT = {1: ("<I", 0x20, 0x2E, "<IIIIII"), 2: ("<Q", 0x28, 0x3A, "<IIQQQQ")}


def text_section(obj: Path) -> bytes:
    """The bytes of .text of a little-endian ELF32 or ELF64 object."""
    data = obj.read_bytes()
    assert data[:4] == b"\x7fELF" and data[5] == 1
    off_format, off_at, counts_at, shdr = ELF_LAYOUT[data[4]]
    (shoff,) = struct.unpack_from(off_format, data, off_at)
    entsize, count, strndx = struct.unpack_from("<HHH", data, counts_at)
    # each header: name, type, flags, addr, offset, size
    headers = [struct.unpack_from(shdr, data, shoff + i * entsize) for i in range(count)]
    names = headers[strndx][4]
    for name, _type, _flags, _addr, offset, size in headers:
        if data[names + name : data.index(b"\0", names + name)] == b".text":
            return data[offset : offset + size]
    raise AssertionError(f"no .text in {obj}")


def words(blob: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(blob) // 4}I", blob))


def gas(arch: str, source: str, tmp: Path, name: str, flags: list[str]) -> Path:
    src, obj = tmp / f"{name}.s", tmp / f"{name}.o"
    src.write_text(PRELUDE[arch] + source)
    run(f"{GNU[arch]}-as", *flags, src, "-o", obj)
    return obj


def disassembly(arch: str, obj: Path) -> list[str]:
    """objdump's instruction text per word, whitespace collapsed."""
    out = run(f"{GNU[arch]}-objdump", "-d", obj).stdout
    rows = re.findall(r"^\s*[0-9a-f]+:\s+(?:[0-9a-f]{8}|[0-9a-f]{4} [0-9a-f]{4})\s+(.*)$", out, re.M)
    return [normal(r) for r in rows]


def llvm_words(arch: str, source: str, tmp: Path, name: str, flags: list[str]) -> list[int]:
    src, obj = tmp / f"{name}.s", tmp / f"{name}.o"
    src.write_text(PRELUDE[arch] + source)
    run(LLVM_MC, *flags, "-filetype=obj", src, "-o", obj)
    return words(text_section(obj))


def llvm_encodings(arch: str, source: str, tmp: Path) -> list[int]:
    src = tmp / "mc.s"
    src.write_text(PRELUDE[arch] + source)
    out = run(LLVM_MC, *MC_FULL[arch], "-show-encoding", src).stdout
    return [
        int.from_bytes(bytes(int(b, 16) for b in e.split(",")), "little")
        for e in re.findall(r"encoding: \[([^]]*)\]", out)
    ]


def normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


# -- the cases ------------------------------------------------------------------------------------------------

Values = list[tuple[int, int | None]]


def cases(arch: str) -> list[tuple[Form, Values]]:
    """Per form: each operand's every register and every lane with the others fixed, then SAMPLES random ones."""
    rng = random.Random(f"isaforge-inst-{arch}")
    out: list[tuple[Form, Values]] = []
    for form in inst_encoding.forms(arch):
        specs = form.operands
        fixed: Values = [
            (min(3 + 5 * i, s.reg_limit - 1), s.lanes - 1 if s.index_bits else None) for i, s in enumerate(specs)
        ]
        for i, spec in enumerate(specs):
            for reg in range(spec.reg_limit):
                out.append((form, [*fixed[:i], (reg, fixed[i][1]), *fixed[i + 1 :]]))
            for lane in range(spec.lanes):
                out.append((form, [*fixed[:i], (fixed[i][0], lane), *fixed[i + 1 :]]))
        for _ in range(SAMPLES):
            out.append(
                (form, [(rng.randrange(s.reg_limit), rng.randrange(s.lanes) if s.index_bits else None) for s in specs])
            )
    return out


class Checked:
    """Everything the assemblers say about one architecture's cases, computed once."""

    def __init__(self, arch: str, tmp: Path) -> None:
        self.arch = arch
        self.cases = cases(arch)
        self.texts = [form.text(values) for form, values in self.cases]
        self.ours = [inst.encode_line(arch, t) for t in self.texts]
        source = "".join(f"{t}\n" for t in self.texts)
        full = gas(arch, source, tmp, "full", GAS_FULL[arch])
        self.gas_words = words(text_section(full))
        self.gas_text = disassembly(arch, full)
        self.llvm_words = llvm_encodings(arch, source, tmp)
        self.rewritten = inst.rewrite(arch, source, "cases.s")
        old = gas(arch, self.rewritten, tmp, "old", GAS_OLD[arch])
        self.old_words = words(text_section(old))
        self.old_text = disassembly(arch, old)
        self.llvm_old_words = llvm_words(arch, self.rewritten, tmp, "mc-old", MC_OLD[arch])

    def mismatches(self, theirs: list) -> list[str]:
        assert len(theirs) == len(self.ours), (len(theirs), len(self.ours))
        return [
            f"{t}: ours {o:#010x}, theirs {w:#010x}"
            for t, o, w in zip(self.texts, self.ours, theirs, strict=True)
            if o != w
        ]


@pytest.fixture(scope="module", params=inst.ARCHES)
def checked(request, tmp_path_factory) -> Checked:
    return Checked(request.param, tmp_path_factory.mktemp(f"inst-{request.param}"))


# -- cross-check and round trip -------------------------------------------------------------------------------


def test_every_case_encodes(checked: Checked):
    assert all(isinstance(w, int) for w in checked.ours)
    names = {form.mnemonic for form, _ in checked.cases}
    assert names == set(inst_encoding.TABLE[checked.arch])
    assert len(checked.cases) > 2500


def test_words_equal_gnu_as(checked: Checked):
    assert checked.mismatches(checked.gas_words) == []


def test_words_equal_llvm_mc(checked: Checked):
    assert checked.mismatches(checked.llvm_words) == []


def test_our_spelling_is_objdumps(checked: Checked):
    bad = [(t, d) for t, d in zip(checked.texts, checked.gas_text, strict=True) if normal(t) != d]
    assert bad == []


def test_rewritten_builds_without_the_extensions_and_round_trips(checked: Checked):
    assert checked.mismatches(checked.old_words) == []
    assert checked.mismatches(checked.llvm_old_words) == []
    bad = [(t, d) for t, d in zip(checked.texts, checked.old_text, strict=True) if normal(t) != d]
    assert bad == []
    lines = checked.rewritten.split("\n")
    assert len(lines) == len(checked.texts) + 1
    comment = inst.COMMENT[checked.arch]
    for line, text, word in zip(lines, checked.texts, checked.ours, strict=False):
        assert line == f".inst 0x{word:08x}  {comment} {text}"


@pytest.mark.parametrize("arch", inst.ARCHES)
def test_the_old_assemblers_reject_the_originals(arch, tmp_path):
    """What the rewrite is for: without the extensions GNU as refuses the instructions themselves."""
    texts = [
        group[0].text([(1, 0 if s.index_bits else None) for s in group[0].operands])
        for group in inst_encoding.TABLE[arch].values()
    ]
    src = tmp_path / "x.s"
    src.write_text(PRELUDE[arch] + "".join(f"{t}\n" for t in texts))
    proc = subprocess.run(
        [f"{GNU[arch]}-as", *GAS_OLD[arch], str(src), "-o", str(tmp_path / "x.o")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert len(re.findall(r"Error:", proc.stderr)) == len(texts), proc.stderr


def test_thumb_state_gets_the_same_instructions(tmp_path):
    """Every arm form's word, emitted by `.inst` in Thumb state, is the T32 instruction (GNU as and llvm-mc)."""
    texts = [
        form.text([(i + 1, (s.lanes - 1) if s.index_bits else None) for i, s in enumerate(form.operands)])
        for form in inst_encoding.forms("arm")
    ]
    source = "".join(f"{t}\n" for t in texts)
    thumb = ".syntax unified\n.thumb\n"
    for name, text in (("orig", source), ("inst", inst.rewrite("arm", source, "t.s"))):
        (tmp_path / f"{name}.s").write_text(thumb + text)
        run(f"{GNU['arm']}-as", *GAS_FULL["arm"], tmp_path / f"{name}.s", "-o", tmp_path / f"{name}.o")
        run(LLVM_MC, *MC_FULL["arm"], "-filetype=obj", tmp_path / f"{name}.s", "-o", tmp_path / f"{name}.mc.o")
    blobs = {text_section(tmp_path / f) for f in ("orig.o", "inst.o", "orig.mc.o", "inst.mc.o")}
    assert len(blobs) == 1
    assert len(next(iter(blobs))) == 4 * len(texts)


# -- the table ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", inst.ARCHES)
def test_fields_are_disjoint_and_clear_of_the_fixed_bits(arch):
    for form in inst_encoding.forms(arch):
        seen = form.base
        for spec in form.operands:
            for bits in (spec.reg_bits, spec.index_bits or ()):
                mask = sum(1 << b for b in bits)
                assert len(set(bits)) == len(bits) and not seen & mask, form
                seen |= mask


@pytest.mark.parametrize("arch", inst.ARCHES)
def test_operand_shapes_pick_one_form(arch):
    for name, group in inst_encoding.TABLE[arch].items():
        shapes = [tuple(s.shape() for s in f.operands) for f in group]
        assert len(shapes) == len(set(shapes)), name


# -- syntax ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arch", "line", "word"),
    [
        ("aarch64", "sdot v1.4s, v2.16b, v3.4b[3]", 0x4FA3E841),
        ("aarch64", "SDOT V1.4S,V2.16B,V3.4B[3]", 0x4FA3E841),
        ("aarch64", "  SDot\tv1.4S ,  v2.16b ,v3.4b [ 3 ]  // c", 0x4FA3E841),
        ("aarch64", "1: sdot v1.4s, v2.16b, v3.4b[3]", 0x4FA3E841),
        ("aarch64", "loop_2:sdot v1.4s, v2.16b, v3.4b[3] /* c */", 0x4FA3E841),
        ("aarch64", "sdot z1.s, z2.b, z7.b[3]", 0x44BF0041),
        ("aarch64", "BFCVT H1, S2", 0x1E634041),
        ("arm", "vsdot.s8 q1, q2, d15[1]", 0xFE242D6F),
        ("arm", "VSDOT.S8 Q1,Q2,D15[1] @ c", 0xFE242D6F),
        ("arm", "x: vsdot.s8 q1, q2, d15 [1] // c", 0xFE242D6F),
        ("arm", "\tvmmla.BF16\tq1, q2, q3 ; ", 0xFC042C46),
    ],
)
def test_flexible_syntax(arch, line, word):
    assert inst.encode_line(arch, line) == word


@pytest.mark.parametrize(
    ("arch", "line"),
    [
        ("aarch64", ""),
        ("aarch64", "// sdot v1.4s, v2.16b, v3.4b[3]"),
        ("aarch64", "# sdot v1.4s, v2.8b, v3.4b[3]"),
        ("aarch64", "sdotx v1.4s, v2.16b, v3.16b"),
        ("aarch64", "sdot_acc v1, v2, v3"),
        ("aarch64", ".macro sdot vd, vn, vm"),
        ("aarch64", "fmla v1.4s, v2.4s, v3.s[0]"),
        ("aarch64", 'msg: .asciz "sdot v0.4s"'),
        ("aarch64", "vsdot.s8 q1, q2, q3"),  # an arm mnemonic on aarch64 is just unknown
        ("arm", "sdot v1.4s, v2.16b, v3.16b"),
        ("arm", "@ vsdot.s8 q1, q2, q3"),
        ("arm", "vmla.f32 q1, q2, q3"),
        ("arm", "vdup.8 q1, r0"),
    ],
)
def test_not_ours(arch, line):
    assert inst.encode_line(arch, line) is None
    assert inst.rewrite(arch, line, "f.S") == line


BAD = [
    ("aarch64", "sdot v0.4s, v1.8b, v2.8b", "sdot: operand 2 is `v1.8b`, expected v<n>.16b"),
    ("aarch64", "sdot v0.4s, v1.16b, v2.8b", "expected v<n>.16b or v<n>.4b[<i>]"),
    ("aarch64", "smmla v0.2s, v1.8b, v2.8b", "operand 1 is `v0.2s`, expected v<n>.4s"),
    ("aarch64", "sudot v0.4s, v1.16b, v2.16b", "expected v<n>.4b[<i>]"),
    ("aarch64", "sdot v0.4s, v1.16b, v2.4b[4]", "lane index 4 out of range 0..3"),
    ("aarch64", "bfdot v0.2s, v1.4h, v2.2h[7]", "lane index 7 out of range 0..3"),
    ("aarch64", "bfmlalt v0.4s, v1.8h, v2.h[8]", "lane index 8 out of range 0..7"),
    ("aarch64", "udot z0.d, z1.h, z2.h[2]", "lane index 2 out of range 0..1"),
    ("aarch64", "sdot v32.4s, v1.16b, v2.16b", "register out of range, must be v0-v31"),
    ("aarch64", "bfmlalb v0.4s, v1.8h, v16.h[0]", "must be v0-v15 for the indexed operand"),
    ("aarch64", "sdot z0.s, z1.b, z8.b[1]", "must be z0-z7 for the indexed operand"),
    ("aarch64", "udot z0.d, z1.h, z16.h[0]", "must be z0-z15 for the indexed operand"),
    ("aarch64", "bfdot z0.s, z1.h, z9.h[0]", "must be z0-z7 for the indexed operand"),
    ("aarch64", "sdot z0.s, z1.b, v2.16b", "operand 3 is `v2.16b`, expected z<n>.b or z<n>.b[<i>]"),
    ("aarch64", "bfcvt s1, s2", "operand 1 is `s1`, expected h<n>"),
    ("aarch64", "sdot v0.4s, v1.16b", "sdot takes 3 operands, got 2"),
    ("aarch64", "sdot v0.4s, , v2.16b", "operand 2 is empty"),
    ("aarch64", "sdot v0.4s, v1.16b, \\vm\\().16b", "operand 3 `\\vm\\().16b` is not a register"),
    ("aarch64", "1: ummla VACC, v1.16b, v2.16b // c", "operand 1 `VACC` is not a register"),
    ("arm", "vsdot.s8 q0, q1, d16[1]", "must be d0-d15 for the indexed operand"),
    ("arm", "vsdot.s8 q0, q1, d2[2]", "lane index 2 out of range 0..1"),
    ("arm", "vfmab.bf16 q0, q1, d8[0]", "must be d0-d7 for the indexed operand"),
    ("arm", "vfmat.bf16 q0, q1, d1[4]", "lane index 4 out of range 0..3"),
    ("arm", "vsdot.s8 q16, q1, q2", "must be q0-q15"),
    ("arm", "vsdot.s8 d32, d1, d2", "must be d0-d31"),
    ("arm", "vsdot.s8 d0, q1, q2", "operand 2 is `q1`, expected d<n>"),
    ("arm", "vmmla.bf16 d0, d1, d2", "operand 1 is `d0`, expected q<n>"),
    ("arm", "vsdot.u8 q0, q1, q2", "`vsdot.u8`: the data type must be written as in `vsdot.s8`"),
    ("arm", "vsmmla q0, q1, q2", "`vsmmla`: the data type must be written as in `vsmmla.s8`"),
    ("arm", "vsdoteq.s8 q0, q1, q2", "vsdot is unconditional"),
    ("arm", "vdotne.bf16 d0, d1, d2", "vdot is unconditional"),
]


@pytest.mark.parametrize(("arch", "line", "message"), BAD)
def test_malformed_stops_with_file_and_line(arch, line, message):
    text = f"// head\n  add x0, x0, 1\n\n    {line}\nsdot v0.4s, v1.16b, v2.16b\n"
    with pytest.raises(InstError) as info:
        inst.rewrite(arch, text, "dir/k.S")
    assert str(info.value).startswith("dir/k.S:4: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert (info.value.filename, info.value.line) == ("dir/k.S", 4)
    with pytest.raises(InstError, match=re.escape(message)):
        inst.encode_line(arch, line)


# -- lines ----------------------------------------------------------------------------------------------------

AARCH64_SOURCE = """\
// SPDX: sdot v0.4s, v1.8b, v2.16b in a comment is fine\r
#include "defs.h"\r
#define DOT(a) sdot a.4s, v1.16b, v2.4b[9] ; \\
    udot a.4s, v1.16b, v2.4b[9]
\t.text
\t.global\tkernel_dot  // sdot
kernel_dot:\r
1:\tsdot\tv16.4s, v4.16b, v0.4b[0]\t// acc 0\r
\tSDOT V17.4S, V4.16B, V0.4B[1]
\tldr q0, [x1], #16 ; sdot v18.4s, v5.16b, v0.4b[2]; add x2, x2, #1
/* sdot v0.4s, v1.8b, v2.16b
   sdot garbage, still a comment */ smmla v20.4s, v6.16b, v7.16b /* opens
   sdot garbage */ bfmmla v21.4s, v6.8h, v7.8h ; // ok
\tmsg: .ascii "sdot v0.4s; // not code"
\tsdot z0.s, z1.b, z2.b[3]   \\
\tsdot_old v1, v2, v3
\tfmla v0.4s, v1.4s, v2.s[0]  // \u00e9
\tsubs x3, x3, #1 ; b.ne 1b
\tret"""

AARCH64_EXPECTED = {
    8: "1:\t.inst 0x4f80e090  // sdot\tv16.4s, v4.16b, v0.4b[0]\t// acc 0\r",
    9: "\t.inst 0x4fa0e091  // SDOT V17.4S, V4.16B, V0.4B[1]",
    10: "\tldr q0, [x1], #16 ; .inst 0x4f80e8b2 /* sdot v18.4s, v5.16b, v0.4b[2] */; add x2, x2, #1",
    12: "   sdot garbage, still a comment */ .inst 0x4e87a4d4 /* smmla v20.4s, v6.16b, v7.16b */ /* opens",
    13: "   sdot garbage */ .inst 0x6e47ecd5  // bfmmla v21.4s, v6.8h, v7.8h ; // ok",
    15: "\t.inst 0x44ba0020 /* sdot z0.s, z1.b, z2.b[3] */   \\",
}


def test_other_lines_pass_byte_for_byte():
    out = inst.rewrite("aarch64", AARCH64_SOURCE, "k.S")
    src_lines, out_lines = AARCH64_SOURCE.split("\n"), out.split("\n")
    assert len(out_lines) == len(src_lines)
    for number, (before, after) in enumerate(zip(src_lines, out_lines, strict=True), 1):
        assert after == AARCH64_EXPECTED.get(number, before), number


def test_trailing_newline_and_crlf_kept():
    for text in ("sdot v0.4s, v1.16b, v2.16b", "sdot v0.4s, v1.16b, v2.16b\r\n", "\n\nnop\n\n", ""):
        out = inst.rewrite("aarch64", text, "k.S")
        assert out.count("\n") == text.count("\n") and out.count("\r") == text.count("\r")
    assert inst.rewrite("aarch64", "x\r\nsdot v0.4s, v1.16b, v2.16b\r\n", "k.S") == (
        "x\r\n.inst 0x4e829420  // sdot v0.4s, v1.16b, v2.16b\r\n"
    )


def test_bytes_that_are_not_utf8_pass(tmp_path):
    src = b"\tnop // \xff\xfe latin-1 \xe9\r\n\tsdot v0.4s, v1.16b, v2.16b // \xff\n"
    (tmp_path / "k.S").write_bytes(src)
    inst.convert_file("aarch64", str(tmp_path / "k.S"), str(tmp_path / "o.S"))
    assert (
        tmp_path / "o.S"
    ).read_bytes() == b"\tnop // \xff\xfe latin-1 \xe9\r\n\t.inst 0x4e829420  // sdot v0.4s, v1.16b, v2.16b // \xff\n"


def test_arm_format():
    src = "\tvsdot.s8 q1, q2, d15[1]  @ acc\n2:\tvdot.bf16 d1, d2, d3 ; vmmla.bf16 q1, q2, q3\n"
    assert inst.rewrite("arm", src, "k.S") == (
        "\t.inst 0xfe242d6f  @ vsdot.s8 q1, q2, d15[1]  @ acc\n"
        "2:\t.inst 0xfc021d03 /* vdot.bf16 d1, d2, d3 */ ; .inst 0xfc042c46 /* vmmla.bf16 q1, q2, q3 */\n"
    )


def test_encode_line_takes_one_instruction():
    with pytest.raises(InstError, match="2 instructions"):
        inst.encode_line("aarch64", "sdot v0.4s, v1.16b, v2.16b; udot v0.4s, v1.16b, v2.16b")
    with pytest.raises(InstError, match="unknown architecture"):
        inst.encode_line("x86", "nop")


GCC_SOURCE = {
    "aarch64": """\
#define ACC v16
#define LANE_DOT(a, i) \\
    sdot a.4s, v4.16b, v0.4b[i]  /* a #define body is left alone */
/* The literal-register lines below use every layout the rewrite knows. */
    .text
    .global dot4
    .type dot4, %function
dot4:
    ld1 {v0.16b}, [x1]
    ld1 {v4.16b}, [x2]
1:  sdot v16.4s, v4.16b, v0.4b[0]   // lane 0
    SDot V17.4s, v4.16B, v0.4b[1]; udot v18.4s, v4.16b, v0.4b[2] /* two */
    usdot v19.4s, v4.16b, v0.16b ; /* then a block
    comment: sdot v0.4s, v1.8b, v2.16b */ bfdot v20.4s, v4.8h, v0.2h[3]
#if 0
    sdot z1.s, z2.b, z3.b[1]
#endif
    ummla v21.4s, v4.16b, v0.16b
    subs x3, x3, #1
    b.ne 1b
    ret
    .size dot4, .-dot4
""",
    "arm": """\
    .syntax unified
    .arm
    .text
    .global dot4
dot4:
    vld1.8 {d0, d1}, [r1]
1:  vsdot.s8 q8, q2, d0[0]    @ lane 0
    vudot.u8 d18, d4, d1[1] ; vusmmla.s8 q10, q2, q0 @ two
    VMMLA.BF16 q11, q2, q0 // cpp comment
    vdot.bf16 d24, d4, d5 /* block */ @ at
    vfmat.bf16 q13, q2, d7[3]
    subs r3, r3, #1
    bne 1b
    bx lr
    .thumb
    .thumb_func
dot4_t:
    vsdot.s8 q8, q2, d0[0]
    vfmab.bf16 q13, q2, d7[2]
    bx lr
""",
}
GCC_FULL = {"aarch64": ["-march=armv8.6-a+sve+i8mm+bf16"], "arm": ["-march=armv8.6-a+i8mm", "-mfpu=neon-fp-armv8"]}
GCC_OLD = {"aarch64": ["-march=armv8-a"], "arm": ["-march=armv7-a", "-mfpu=neon"]}


@pytest.mark.parametrize("arch", inst.ARCHES)
def test_preprocessed_source_builds_the_same_with_an_old_target(arch, tmp_path):
    """A .S with cpp, labels, comments and `;` lines: rewritten and built without the extensions == original."""
    (tmp_path / "orig.S").write_text(GCC_SOURCE[arch])
    inst.convert_file(arch, str(tmp_path / "orig.S"), str(tmp_path / "inst.S"))
    gcc = f"{GNU[arch]}-gcc"
    run(gcc, *GCC_FULL[arch], "-c", tmp_path / "orig.S", "-o", tmp_path / "orig.o")
    run(gcc, *GCC_OLD[arch], "-c", tmp_path / "inst.S", "-o", tmp_path / "inst.o")
    proc = subprocess.run(
        [gcc, *GCC_OLD[arch], "-c", str(tmp_path / "orig.S"), "-o", str(tmp_path / "x.o")],
        capture_output=True,
        check=False,
    )
    assert proc.returncode != 0, "the old target should reject the original"
    assert text_section(tmp_path / "orig.o") == text_section(tmp_path / "inst.o")
    rewritten = (tmp_path / "inst.S").read_text()
    assert rewritten.count("\n") == GCC_SOURCE[arch].count("\n")
    assert rewritten.count(".inst") == (7 if arch == "aarch64" else 8)


# -- the script -----------------------------------------------------------------------------------------------


def script(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run src/isaforge/inst.py as Meson does: a bare interpreter, no PYTHONPATH, not from the repository."""
    return subprocess.run(
        [sys.executable, "-I", str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_script_writes_the_output(tmp_path):
    (tmp_path / "k.S").write_bytes(AARCH64_SOURCE.encode("utf-8", "surrogateescape"))
    proc = script("--arch", "aarch64", "k.S", "-o", "out/k.S", cwd=tmp_path)
    assert proc.returncode != 0 and "out/k.S" in proc.stderr  # the directory must exist
    (tmp_path / "out").mkdir()
    proc = script("--arch", "aarch64", "k.S", "-o", "out/k.S", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == proc.stderr == ""
    assert (tmp_path / "out" / "k.S").read_bytes() == inst.rewrite("aarch64", AARCH64_SOURCE, "k.S").encode(
        "utf-8", "surrogateescape"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["k.S"]
    proc = script("--arch", "arm", "k.S", cwd=tmp_path)  # no -o: stdout; nothing here is an arm instruction
    assert proc.returncode == 0 and proc.stdout.count("\n") == AARCH64_SOURCE.count("\n")


def test_script_error_leaves_no_output(tmp_path):
    (tmp_path / "bad.S").write_text("nop\nnop\nsdot v0.4s, v1.16b, v2.4b[4]\nnop\n")
    proc = script("--arch", "aarch64", "bad.S", "-o", "bad.out.S", cwd=tmp_path)
    assert proc.returncode != 0
    assert proc.stderr == "bad.S:3: sdot: operand 3 `v2.4b[4]`: lane index 4 out of range 0..3\n"
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.S"]


def test_script_missing_input(tmp_path):
    proc = script("nope.S", "-o", "o.S", cwd=tmp_path)
    assert proc.returncode != 0
    assert proc.stderr.strip() == "nope.S: No such file or directory"
    assert list(tmp_path.iterdir()) == []


def test_failed_rewrite_keeps_an_older_output(tmp_path):
    out = tmp_path / "k.out.S"
    out.write_text("previous\n")
    (tmp_path / "k.S").write_text("vsdot.s8 q0, q1, d2[2]\n")
    with pytest.raises(InstError, match=r"k\.S:1: "):
        inst.convert_file("arm", str(tmp_path / "k.S"), str(out))
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.S", "k.out.S"]
