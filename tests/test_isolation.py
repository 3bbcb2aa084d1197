"""isaforge.isolation and `isaforge check-isolation`, with the real cross compilers, objdump and assembler."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import isaforge
from isaforge import isolation
from isaforge.catalogue import load
from isaforge.commands.check_isolation import summary
from isaforge.errors import IsaforgeError

CAT = load()
SRC_DIR = Path(isaforge.__file__).resolve().parents[1]

# `sdot v0.4s, v1.16b, v2.16b` (A64) and `vsdot.s8 q0, q1, q2` (A32; from arm-linux-gnueabihf-as
# -march=armv8.2-a+dotprod -mfpu=neon-fp-armv8 and objdump): dotprod instructions planted as raw words, so the
# compiler accepts them at the baseline, as a leak from a badly flagged kernel would look.
DOT_WORD = {"aarch64": "0x4e829420", "arm": "0xfc220d44"}
DOT_MNEMONIC = {"aarch64": "sdot", "arm": "vsdot.s8"}
# The arm test file is built as A32 so the word is one A32 instruction (Debian's default is Thumb-2).
MODE_FLAGS = {"aarch64": [], "arm": ["-marm"]}

PLANTED = """
int clean(int a, int b) { return a * 3 + b; }
void planted(void) { __asm__ volatile(".inst WORD"); }
"""

CLEAN = """
#include <string.h>
extern int helper(int);
int clean(const int *a, int n, const char *s) {
  int r = 0;
  if (!a) return helper(n) ? 2 : 3;
  for (int i = 0; i < n; i++) r += a[i] * 3 + (a[i] > 5 ? 1 : 7);
  return r + (int)strlen(s) + 0x12345678;
}
double scale(double x) { return x * 1.5; }
int pick(int x) {
  switch (x) { case 0: return 5; case 1: return helper(7); case 2: return 9; case 3: return 11; default: return 2; }
}
"""

TOOLS = [f"{a.triple}-{t}" for a in CAT.arches.values() for t in ("gcc", "as", "objdump")] + ["clang-19"]
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS), reason="cross toolchains missing (ci/install-toolchains.sh)"
)


def compile_entry(builddir: Path, arch: str, compiler: str, flags: list[str], source: str, *, name: str) -> dict:
    """Compile `source` into builddir/<name>.o with flags and return its compile_commands.json entry."""
    src = builddir / f"{name}.c"
    src.write_text(source)
    cmd = [*CAT.compiler(compiler).command(CAT.arch(arch)), *flags, "-O2", "-o", f"{name}.o", "-c", src.name]
    subprocess.run(cmd, cwd=builddir, check=True, capture_output=True, text=True)
    return {"directory": str(builddir), "command": shlex.join(cmd), "file": src.name, "output": f"{name}.o"}


def write_commands(builddir: Path, entries: list[dict]) -> None:
    (builddir / "compile_commands.json").write_text(json.dumps(entries, indent=1))


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC_DIR), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "isaforge", "check-isolation", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def planted(arch: str) -> str:
    return PLANTED.replace("WORD", DOT_WORD[arch])


# -- (1) a planted violation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_planted_dotprod_at_baseline_is_a_violation(tmp_path, arch):
    flags = [*CAT.baseline_flags(arch, "gcc"), *MODE_FLAGS[arch]]
    write_commands(tmp_path, [compile_entry(tmp_path, arch, "gcc", flags, planted(arch), name="leaky")])

    report = isolation.check_builddir(tmp_path)
    assert len(report.objects) == 1
    assert report.checked > 0
    [violation] = report.violations
    assert violation.object == "leaky.o"
    assert violation.function == "planted"
    assert violation.instruction.split()[0] == DOT_MNEMONIC[arch]
    assert violation.needs == "dotprod"
    assert "neon" in violation.allowed
    assert "dotprod" not in violation.allowed
    if arch == "arm":
        assert report.objects[0].flags == tuple(CAT.arch("arm").baseline)

    result = cli(tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    assert lines[0].startswith("check-isolation: 1 object, ")
    assert "1 violation" in lines[0]
    assert lines[1] == violation.describe()
    assert lines[1].startswith(f"leaky.o: planted: {DOT_MNEMONIC[arch]} ")
    assert lines[1].endswith("(needs dotprod, flags allow neon)")
    assert "Traceback" not in result.stderr


def test_planted_thumb_word_is_a_violation(tmp_path):
    """Debian's arm default is Thumb-2: the same word planted in T32 code is found too."""
    source = PLANTED.replace(".inst WORD", f".inst.w {DOT_WORD['arm']}")
    write_commands(
        tmp_path,
        [compile_entry(tmp_path, "arm", "gcc", [*CAT.baseline_flags("arm", "gcc"), "-mthumb"], source, name="thumb")],
    )
    [violation] = isolation.check_builddir(tmp_path).violations
    assert (violation.function, violation.instruction.split()[0], violation.needs) == ("planted", "vsdot.s8", "dotprod")


# -- (2) the same instruction with the variant's flags --------------------------------------------------------------
@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_planted_dotprod_with_variant_flags_is_allowed(tmp_path, arch):
    flags = [*CAT.variant_flags(arch, "gcc", "dotprod"), *MODE_FLAGS[arch]]
    write_commands(tmp_path, [compile_entry(tmp_path, arch, "gcc", flags, planted(arch), name="dotprod")])

    report = isolation.check_builddir(tmp_path)
    assert report.ok, [v.describe() for v in report.violations]
    assert report.checked > 0
    assert "dotprod" in report.objects[0].allowed

    result = cli(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [summary(report)]


# -- (3) clean baseline code, both compilers ------------------------------------------------------------------------
def test_clean_baseline_code_has_no_violations(tmp_path):
    entries = [
        compile_entry(tmp_path, arch, compiler, CAT.baseline_flags(arch, compiler), CLEAN, name=f"{arch}-{compiler}")
        for arch in CAT.arches
        for compiler in CAT.compilers
    ]
    entries[0].pop("output")  # the object is then found from `-o` in the command
    write_commands(tmp_path, entries)

    report = isolation.check_builddir(tmp_path)
    assert len(report.objects) == len(entries)
    assert report.ok, [v.describe() for v in report.violations]
    assert report.unparseable == 0, [(o.object, u.text) for o in report.objects for u in o.unparseable]
    for obj in report.objects:
        assert obj.checked > 10, obj
    functions = {insn.function for insn in isolation.disassemble(tmp_path / "arm-gcc.o", CAT.arch("arm"))[0]}
    assert {"clean", "scale", "pick"} <= functions

    result = cli(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [summary(report)]
    assert f"{len(entries)} objects" in result.stdout


def test_host_entries_are_skipped_with_a_note(tmp_path):
    entry = compile_entry(tmp_path, "aarch64", "clang", CAT.baseline_flags("aarch64", "clang"), CLEAN, name="cross")
    host = {"directory": str(tmp_path), "command": "cc -O2 -o host.o -c host.c", "file": "host.c", "output": "host.o"}
    write_commands(tmp_path, [entry, host])

    report = isolation.check_builddir(tmp_path)
    assert [o.object for o in report.objects] == ["cross.o"]
    assert any("host" in note for note in report.notes)
    result = cli(tmp_path)
    assert result.returncode == 0
    assert "isaforge: note: skipped 1 host-build object" in result.stderr


# -- (4) bad input --------------------------------------------------------------------------------------------------
def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("isaforge: error: ")
    return lines[0]


def test_missing_builddir(tmp_path):
    line = one_line_error(cli(tmp_path / "nope"))
    assert "does not exist" in line
    assert "meson setup" in line


def test_missing_compile_commands(tmp_path):
    line = one_line_error(cli(tmp_path))
    assert "compile_commands.json not found" in line


def test_broken_compile_commands(tmp_path):
    (tmp_path / "compile_commands.json").write_text("{not json")
    assert "not valid JSON" in one_line_error(cli(tmp_path))


def test_objects_not_built_yet(tmp_path):
    cmd = "aarch64-linux-gnu-gcc -march=armv8-a -o a.o -c a.c"
    write_commands(tmp_path, [{"directory": str(tmp_path), "command": cmd, "file": "a.c"}])
    assert "build first" in one_line_error(cli(tmp_path))


def test_unknown_cross_target(tmp_path):
    cmd = "clang-19 --target=riscv64-linux-gnu -o a.o -c a.c"
    write_commands(tmp_path, [{"directory": str(tmp_path), "command": cmd, "file": "a.c"}])
    with pytest.raises(IsaforgeError, match="unknown target 'riscv64-linux-gnu'"):
        isolation.check_builddir(tmp_path)


# -- pieces ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "triple"),
    [
        ("clang-19 --target=arm-linux-gnueabihf -c a.c", "arm-linux-gnueabihf"),
        ("clang-19 -target aarch64-linux-gnu -c a.c", "aarch64-linux-gnu"),
        ("/usr/bin/aarch64-linux-gnu-gcc -c a.c", "aarch64-linux-gnu"),
        ("ccache arm-linux-gnueabihf-gcc-12 -c a.c", "arm-linux-gnueabihf"),
        ("cc -c a.c", None),
        ("clang-19 -c a.c", None),
        ("gcc -c x86_64-linux-gnu-gcc.c", None),
    ],
)
def test_target_triple(command, triple):
    assert isolation.target_triple(shlex.split(command)) == triple


def test_assembler_flags_last_wins_and_baseline_fallback():
    arm = CAT.arch("arm")
    args = ["gcc", "-march=armv7-a", "-mfpu=neon", "-O2", "-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8", "-mthumb"]
    assert isolation.assembler_flags(arm, args) == ["-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8"]
    assert isolation.assembler_flags(arm, ["gcc", "-O2"]) == list(arm.baseline)


def test_needed_feature_sets_are_named_from_the_catalogue(tmp_path):
    """Instructions of each kind, planted at the baseline: the smallest catalogue feature set is named."""
    words = {
        "0x4e82a420": "i8mm",  # smmla v0.4s, v1.16b, v2.16b
        "0x2518e3e0": "sve",  # ptrue p0.b
        "0x6462e420": "svebf16",  # bfmmla z0.s, z1.h, z2.h: the one feature that is sve+bf16
        "0x4e421420": "fp16",  # fadd v0.8h, v1.8h, v2.8h
    }
    body = "".join(f'__asm__ volatile(".inst {w}");' for w in words)
    source = f"void planted(void) {{ {body} }}"
    write_commands(tmp_path, [compile_entry(tmp_path, "aarch64", "gcc", ["-march=armv8-a"], source, name="many")])
    report = isolation.check_builddir(tmp_path)
    assert [v.needs for v in report.violations] == list(words.values()), [v.describe() for v in report.violations]


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_every_variant_probe_is_clean_with_its_flags_and_caught_at_the_baseline(tmp_path, arch, compiler):
    entries, expected = [], {}
    for variant in CAT.arch_variants(arch):
        if not variant.probe:
            continue
        flags = CAT.variant_flags(arch, compiler, variant.name)
        entries.append(compile_entry(tmp_path, arch, compiler, flags, variant.probe, name=variant.name))
        expected[f"{variant.name}.o"] = "+".join(sorted(variant.requires, key=lambda f: CAT.features[f].bit))
    write_commands(tmp_path, entries)
    assert isolation.check_builddir(tmp_path).ok
    for entry in entries:
        baseline = isolation.check_object(
            tmp_path / entry["output"], CAT.arch(arch), CAT.baseline_flags(arch, compiler), label=entry["output"]
        )
        needs = {v.needs for v in baseline.violations}
        if expected[entry["output"]] == "neon":
            assert not needs
        else:
            assert needs == {expected[entry["output"]]}, entry["output"]


def test_every_cross_build_of_the_library_is_isolated(cross_build, isaforge_build):
    """The shipped library itself: every object of every cross build, zero instructions beyond its own flags."""
    report = isolation.check_builddir(isaforge_build(cross_build))
    assert report.violations == []
    variant_objects = [
        o for o in report.objects if "isf_" in str(o.object) and "-march=armv8.2-a+" in " ".join(o.flags)
    ]
    assert variant_objects, "the build compiled no variant object with its own flags"
    assert report.checked > 1000 and report.unparseable == 0
