"""isaforge.isolation and `isaforge check-isolation`, with the real cross compilers, objdump and assembler: each object
is held to its declared variant (-DISAFORGE_VARIANT) or else to the arch baseline, whatever flags built it."""

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
from isaforge import compile_commands, isolation, isolation_judge
from isaforge.catalogue import VARIANT_DEFINE, load
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

# A plain int8 dot loop: GCC -O3 vectorises it into sdot / vsdot as soon as the flags allow dotprod.
PLAIN_DOT = """
#include <stddef.h>
#include <stdint.h>
int32_t dot_plain(const int8_t *a, const int8_t *b, size_t n) {
  int32_t s = 0;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
"""
# The same loop in one function a `target` attribute lifts above the file's baseline flags (GCC's spelling).
ATTR_LOOP = PLAIN_DOT.replace("int32_t dot_plain", '__attribute__((target("arch=armv8.2-a+dotprod"))) int32_t dot_attr')
# clang does not vectorise the loop into sdot; its `target("dotprod")` attribute makes the intrinsic available.
ATTR_INTRINSIC = """
#include <arm_neon.h>
__attribute__((target("dotprod"))) int32x4_t dot_attr(int32x4_t acc, int8x16_t a, int8x16_t b) {
  return vdotq_s32(acc, a, b);
}
"""
DOTPROD_MARCH = {"aarch64": ["-march=armv8.2-a+dotprod"], "arm": ["-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8"]}
DOTPROD_DEFINE = f"-D{VARIANT_DEFINE}=dotprod"

TOOLS = [f"{a.triple}-{t}" for a in CAT.arches.values() for t in ("gcc", "as", "objdump")] + ["clang-19"]
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS), reason="cross toolchains missing (ci/install-toolchains.sh)"
)


def compile_entry(
    builddir: Path, arch: str, compiler: str, flags: list[str], source: str, *, name: str, opt: str = "-O2"
) -> dict:
    """Compile `source` into builddir/<name>.o with flags and return its compile_commands.json entry."""
    src = builddir / f"{name}.c"
    src.write_text(source)
    cmd = [*CAT.compiler(compiler).command(CAT.arch(arch)), *flags, opt, "-o", f"{name}.o", "-c", src.name]
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


def run_tool(*cmd: str | Path) -> None:
    """A build tool (meson, cmake) from the venv or PATH; a failure shows its output."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


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
    # Built with the baseline itself: the line does not repeat the flags.
    assert lines[1].endswith(f"(needs dotprod; held to the {arch} baseline, which allows neon)")
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


# -- (2) the same instruction in an object of the declared variant -----------------------------------------------
@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_planted_dotprod_in_the_declared_variant_is_allowed(tmp_path, arch):
    flags = [*CAT.variant_flags(arch, "gcc", "dotprod"), DOTPROD_DEFINE, *MODE_FLAGS[arch]]
    write_commands(tmp_path, [compile_entry(tmp_path, arch, "gcc", flags, planted(arch), name="dotprod")])

    report = isolation.check_builddir(tmp_path)
    assert report.ok, [v.describe() for v in report.violations]
    assert report.checked > 0
    [obj] = report.objects
    assert obj.held.variant == "dotprod"
    assert "dotprod" in obj.allowed
    assert obj.flags == tuple(compile_commands.assembler_flags(CAT.variant_flags(arch, "gcc", "dotprod")))

    result = cli(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [summary(report)]


# -- (3) a project-wide -march, a target attribute: held to the baseline whatever the flags ------------------------
@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_global_march_vectorising_a_plain_loop_is_a_violation(tmp_path, arch):
    """-Dc_args=-march=armv8.2-a+dotprod on a plain file: GCC -O3 emits sdot, which cortex-a53 / cortex-a7 lack."""
    entry = compile_entry(tmp_path, arch, "gcc", DOTPROD_MARCH[arch], PLAIN_DOT, name="plain", opt="-O3")
    write_commands(tmp_path, [entry])

    report = isolation.check_builddir(tmp_path)
    assert report.violations, "GCC did not vectorise the loop into dotprod instructions"
    assert {(v.function, v.instruction.split()[0], v.needs) for v in report.violations} == {
        ("dot_plain", DOT_MNEMONIC[arch], "dotprod")
    }
    [obj] = report.objects
    assert obj.held.variant is None
    assert obj.flags == tuple(compile_commands.assembler_flags(CAT.baseline_flags(arch, "gcc")))
    assert obj.built_with == tuple(DOTPROD_MARCH[arch])

    result = cli(tmp_path, "-v")
    assert result.returncode == 1, result.stdout + result.stderr
    built = " ".join(DOTPROD_MARCH[arch])
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("plain.o: dot_plain: "))
    assert line.split(": ")[2].startswith(f"{DOT_MNEMONIC[arch]} ")
    assert line.endswith(f"(needs dotprod; held to the {arch} baseline, which allows neon; built with {built})")
    baseline = " ".join(obj.flags)
    assert f"  plain.o [{arch}]: built with {built}; held to the {arch} baseline {baseline} (neon); " in result.stdout


@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_the_same_loop_declared_as_the_dotprod_variant_is_clean(tmp_path, arch):
    flags = [*DOTPROD_MARCH[arch], DOTPROD_DEFINE]
    write_commands(tmp_path, [compile_entry(tmp_path, arch, "gcc", flags, PLAIN_DOT, name="plain", opt="-O3")])
    mnemonics = {i.text.split()[0] for i in isolation_judge.disassemble(tmp_path / "plain.o", CAT.arch(arch))[0]}
    assert DOT_MNEMONIC[arch] in mnemonics

    report = isolation.check_builddir(tmp_path)
    assert report.ok, [v.describe() for v in report.violations]
    result = cli(tmp_path, "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"built with {' '.join(flags)}; held to variant dotprod " in result.stdout


@pytest.mark.parametrize(
    ("arch", "compiler", "source"),
    [("aarch64", "gcc", ATTR_LOOP), ("aarch64", "clang", ATTR_INTRINSIC), ("arm", "clang", ATTR_INTRINSIC)],
    ids=["aarch64-gcc-loop", "aarch64-clang-intrinsic", "arm-clang-intrinsic"],
)
def test_target_attribute_in_a_baseline_file_is_a_violation(tmp_path, arch, compiler, source):
    flags = CAT.baseline_flags(arch, compiler)
    write_commands(tmp_path, [compile_entry(tmp_path, arch, compiler, flags, source, name="attr", opt="-O3")])

    violations = isolation.check_builddir(tmp_path).violations
    assert violations
    assert {(v.function, v.instruction.split()[0], v.needs) for v in violations} == {
        ("dot_attr", DOT_MNEMONIC[arch], "dotprod")
    }
    assert all(not v.built_with for v in violations)  # built with the baseline: the attribute is the leak


def test_compiler_default_above_the_baseline_is_named(tmp_path):
    """No -march at all: what the compiler defaults to is not trusted, and the line says the default built it."""
    write_commands(tmp_path, [compile_entry(tmp_path, "aarch64", "clang", [], ATTR_INTRINSIC, name="dflt")])
    [violation] = isolation.check_builddir(tmp_path).violations
    assert violation.built_with == "no -march (the compiler's default)"
    assert violation.describe().endswith("built with no -march (the compiler's default))")


def test_variant_object_is_held_to_its_own_variant(tmp_path):
    """An i8mm instruction in an object declared dotprod is named, even when its -march allows i8mm."""
    source = 'void planted(void) { __asm__ volatile(".inst 0x4e82a420"); }'  # smmla v0.4s, v1.16b, v2.16b
    flags = ["-march=armv8.6-a+i8mm+dotprod", DOTPROD_DEFINE]
    write_commands(tmp_path, [compile_entry(tmp_path, "aarch64", "gcc", flags, source, name="var")])
    [violation] = isolation.check_builddir(tmp_path).violations
    assert violation.describe() == (
        "var.o: planted: smmla v0.4s, v1.16b, v2.16b (needs i8mm; held to variant dotprod, which allows neon, "
        "dotprod; built with -march=armv8.6-a+i8mm+dotprod)"
    )


def test_a_feature_set_object_is_held_to_exactly_its_features(tmp_path):
    """An object of an engine's fp16+dotprod library may use sdot and fp16 arithmetic, and nothing more (here an
    i8mm smmla its -march allows)."""
    source = 'void planted(void) { __asm__ volatile(".inst 0x4e82a420"); }'  # smmla v0.4s, v1.16b, v2.16b
    flags = ["-march=armv8.6-a+i8mm+dotprod+fp16", f"-D{VARIANT_DEFINE}=fp16+dotprod"]
    write_commands(tmp_path, [compile_entry(tmp_path, "aarch64", "gcc", flags, source, name="set")])
    [violation] = isolation.check_builddir(tmp_path).violations
    assert "needs i8mm; held to variant fp16+dotprod, which allows neon, fp16, dotprod;" in violation.describe()


def test_meson_project_configured_with_a_global_march(tmp_path):
    """A real Meson project with the repo's cross file: clean as configured, caught after -Dc_args=-march=…"""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "plain.c").write_text(PLAIN_DOT)
    (project / "dot_dotprod.c").write_text(PLAIN_DOT.replace("dot_plain", "dot_dotprod"))
    variant_args = ", ".join(f"'{a}'" for a in ["-O3", *DOTPROD_MARCH["aarch64"], DOTPROD_DEFINE])
    (project / "meson.build").write_text(
        "project('leak', 'c')\n"
        "static_library('plain', 'plain.c', c_args: ['-O3'])\n"
        f"static_library('eng_dotprod', 'dot_dotprod.c', c_args: [{variant_args}])\n"
    )
    build = tmp_path / "build"
    cross = SRC_DIR.parent / "toolchains" / "meson" / "aarch64-linux-gnu-gcc.ini"
    run_tool("meson", "setup", "--cross-file", cross, build, project)
    run_tool("meson", "compile", "-C", build)
    clean = cli(build)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "2 objects" in clean.stdout

    run_tool("meson", "configure", build, "-Dc_args=-march=armv8.2-a+dotprod")
    run_tool("meson", "compile", "-C", build)
    result = cli(build)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("check-isolation: 2 objects, ") and "in 1 object(s)" in lines[0], lines[0]
    assert lines[1:], result.stdout
    built = "built with -march=armv8.2-a+dotprod"
    for line in lines[1:]:  # the declared variant keeps its sdot: only the plain library is named
        assert line.startswith("libplain.a.p/plain.c.o: dot_plain: sdot "), line
        assert line.endswith(f"(needs dotprod; held to the aarch64 baseline, which allows neon; {built})"), line


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake missing")
def test_cmake_build_directory(tmp_path):
    """CMake's compile_commands.json ("command" strings, objects under CMakeFiles/<t>.dir/) is read the same way."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "plain.c").write_text(PLAIN_DOT)
    (project / "dot_dotprod.c").write_text(PLAIN_DOT.replace("dot_plain", "dot_dotprod"))
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        "project(leak C)\n"
        "add_library(plain STATIC plain.c)\n"
        "add_library(eng_dotprod STATIC dot_dotprod.c)\n"
        f"target_compile_definitions(eng_dotprod PRIVATE {VARIANT_DEFINE}=dotprod)\n"
    )
    build = tmp_path / "build"
    run_tool(
        "cmake",
        "-S",
        project,
        "-B",
        build,
        "-DCMAKE_SYSTEM_NAME=Linux",
        "-DCMAKE_SYSTEM_PROCESSOR=aarch64",
        "-DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc",
        "-DCMAKE_C_FLAGS=-O3 -march=armv8.2-a+dotprod",
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
    )
    run_tool("cmake", "--build", build)
    report = isolation.check_builddir(build)
    assert sorted(o.object for o in report.objects) == [
        "CMakeFiles/eng_dotprod.dir/dot_dotprod.c.o",
        "CMakeFiles/plain.dir/plain.c.o",
    ]
    assert {(v.object, v.function, v.needs) for v in report.violations} == {
        ("CMakeFiles/plain.dir/plain.c.o", "dot_plain", "dotprod")
    }


# -- (4) clean baseline code, both compilers ------------------------------------------------------------------------
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
    functions = {insn.function for insn in isolation_judge.disassemble(tmp_path / "arm-gcc.o", CAT.arch("arm"))[0]}
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


# -- (5) bad input --------------------------------------------------------------------------------------------------
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
    assert line.endswith(f"; give a {compile_commands.BUILD_DIRECTORY}")


def test_broken_compile_commands(tmp_path):
    (tmp_path / "compile_commands.json").write_text("{not json")
    assert "not valid JSON" in one_line_error(cli(tmp_path))


def test_objects_not_built_yet(tmp_path):
    cmd = "aarch64-linux-gnu-gcc -march=armv8-a -o a.o -c a.c"
    write_commands(tmp_path, [{"directory": str(tmp_path), "command": cmd, "file": "a.c"}])
    assert "build first" in one_line_error(cli(tmp_path))


@pytest.mark.parametrize(
    ("variant", "what"),
    [
        ("dotprd", "unknown variant 'dotprd' in -DISAFORGE_VARIANT=dotprd"),
        ("sve", "variant 'sve' in -DISAFORGE_VARIANT=sve has no arm build"),
        ("sve+i8mm", "variant 'sve+i8mm' in -DISAFORGE_VARIANT=sve+i8mm has no arm build"),
    ],
)
def test_unknown_variant_in_the_define(tmp_path, variant, what):
    cmd = f"arm-linux-gnueabihf-gcc -D{VARIANT_DEFINE}={variant} -o a.o -c ../src/a.c"
    write_commands(tmp_path, [{"directory": str(tmp_path), "command": cmd, "file": "../src/a.c"}])
    line = one_line_error(cli(tmp_path))
    known = "choose one of: ref, neon, fp16, dotprod, bf16, i8mm, or features joined with '+'"
    assert line == f"isaforge: error: ../src/a.c: {what}; {known}"


def test_an_unknown_feature_in_a_feature_set_is_named(tmp_path):
    cmd = f"arm-linux-gnueabihf-gcc -D{VARIANT_DEFINE}=fp16+dotprot -o a.o -c ../src/a.c"
    write_commands(tmp_path, [{"directory": str(tmp_path), "command": cmd, "file": "../src/a.c"}])
    assert "unknown feature 'dotprot' in 'fp16+dotprot'" in one_line_error(cli(tmp_path))


def test_unknown_cross_target(tmp_path):
    cmd = "clang-19 --target=riscv64-linux-gnu -o a.o -c a.c"
    write_commands(tmp_path, [{"directory": str(tmp_path), "command": cmd, "file": "a.c"}])
    with pytest.raises(IsaforgeError, match="unknown target 'riscv64-linux-gnu'"):
        isolation.check_builddir(tmp_path)


def test_needed_feature_sets_are_named_from_the_catalogue(tmp_path):
    """Instructions of each kind, planted at the baseline: the smallest catalogue feature set is named."""
    words = {
        "0x4e82a420": "i8mm",  # smmla v0.4s, v1.16b, v2.16b
        "0x2518e3e0": "sve or sme",  # ptrue p0.b, a streaming SVE instruction
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
        flags = [*CAT.variant_flags(arch, compiler, variant.name), f"-D{VARIANT_DEFINE}={variant.name}"]
        try:
            entries.append(compile_entry(tmp_path, arch, compiler, flags, variant.probe, name=variant.name))
        except subprocess.CalledProcessError:
            assert compiler == "gcc" and variant.name.startswith("sme")  # gcc 12 knows no SME; nothing else fails
            continue
        expected[f"{variant.name}.o"] = "+".join(sorted(variant.requires, key=lambda f: CAT.features[f].bit))
    # Streaming SVE (the SVE and SVE2 probes' sdot and smlalb, the SME probes' loads) is named either way: SVE or SME
    # would let it run. SVE's matrix multiplies are not streaming instructions.
    streaming = {
        "sve": {"sve or sme"},
        "sve2": {"sve2 or sme"},
        "sme": {"sme", "sve or sme"},  # smstart and fmopa, ptrue and the loads
        "sme2": {"sme", "sme2", "sve or sme"},  # … and the 4-vector load and fmla of SME2
    }
    expected = {obj: streaming.get(need, {need}) for obj, need in expected.items()}
    write_commands(tmp_path, entries)
    assert isolation.check_builddir(tmp_path).ok
    for entry in entries:
        baseline = isolation.check_object(
            tmp_path / entry["output"], CAT.arch(arch), CAT.baseline_flags(arch, compiler), label=entry["output"]
        )
        needs = {v.needs for v in baseline.violations}
        if expected[entry["output"]] == {"neon"}:
            assert not needs
        else:
            assert needs == expected[entry["output"]], entry["output"]


def test_every_cross_build_of_the_library_is_isolated(cross_build, isaforge_build):
    """The shipped library itself: every object of every cross build within its variant, the rest at the baseline."""
    report = isolation.check_builddir(isaforge_build(cross_build))
    assert report.violations == []
    variants = {o.held.variant for o in report.objects}
    assert {"neon", "dotprod"} <= variants, "the build's variant libraries do not carry their variant define"
    for obj in report.objects:
        # Every object of a variant library (isf_pack_<variant>.c and the SVE vector-length helper included) is marked.
        # The test programs' reader of SME state (tests/kernels/sme_state.c) is declared sme as well.
        in_variant_lib = obj.object.startswith((f"libisf_{cross_build.arch_name}_", "tests/kernels/libisf_test_sme"))
        assert (obj.held.variant is not None) == in_variant_lib, obj.object
        if obj.held.variant and obj.held.variant != "neon":
            assert "-march=armv8.2-a+" in " ".join(obj.flags)
    assert report.checked > 1000 and report.unparseable == 0


# -- (5) an engine's build directory --------------------------------------------------------------------------------
ENGINE = SRC_DIR.parent / "examples" / "engine-meson"
ENGINE_REFERENCE = "kernels/reference/dot_s8_1x1_ref.c"


def engine_build(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """The Meson example engine copied outside the tree, and an installed libisaforge for aarch64 gcc to build it
    against (through pkg-config, as an engine outside the tree does)."""
    from isaforge import builds  # noqa: PLC0415 - only these tests build libisaforge

    prefix = builds.ensure_installed(builds.build_for("aarch64-linux-gnu", "gcc"))
    copy = tmp_path / name
    shutil.copytree(ENGINE, copy, ignore=shutil.ignore_patterns("subprojects"))
    return copy, prefix


def configure_and_build(copy: Path, prefix: Path, *options: str) -> Path:
    build = copy / "build"
    cross = SRC_DIR.parent / "toolchains" / "meson" / "aarch64-linux-gnu-gcc.ini"
    pkg_config = f"-Dpkg_config_path={prefix}/lib/pkgconfig"
    run_tool("meson", "setup", "--cross-file", cross, "--buildtype=release", pkg_config, *options, build, copy)
    run_tool("meson", "compile", "-C", build)
    return build


@pytest.mark.e2e
def test_engine_sdot_planted_in_a_baseline_file(tmp_path):
    copy, prefix = engine_build(tmp_path, "planted")
    clean = cli(configure_and_build(copy, prefix))
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the engine as written: every object where it belongs
    reference = copy / ENGINE_REFERENCE
    reference.write_text(reference.read_text() + planted("aarch64"))
    run_tool("meson", "compile", "-C", copy / "build")
    result = cli(copy / "build")
    assert result.returncode == 1, result.stdout + result.stderr
    assert any(
        "dot_s8_1x1_ref.c.o: planted: sdot " in line and "needs dotprod; held to the aarch64 baseline" in line
        for line in result.stdout.splitlines()
    ), result.stdout


@pytest.mark.e2e
def test_engine_configured_with_a_global_march(tmp_path):
    """-Dc_args=-march=armv8.2-a+dotprod: GCC vectorises the engine's plain reference loop with sdot, which the
    reference's own flags now allow, and which a cortex-a53 would die on."""
    copy, prefix = engine_build(tmp_path, "global")
    result = cli(configure_and_build(copy, prefix, "-Dc_args=-march=armv8.2-a+dotprod"))
    assert result.returncode == 1, result.stdout + result.stderr
    leaks = [line for line in result.stdout.splitlines()[1:] if "dot_s8_1x1_ref.c.o" in line]
    assert leaks and all("held to the aarch64 baseline" in line for line in leaks), result.stdout
    assert any(": sdot " in line for line in leaks), result.stdout
