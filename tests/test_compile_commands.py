"""What compile commands say about an object: its cross target, the flags that set its instruction set, its variant."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from isaforge import compile_commands
from isaforge.errors import IsaforgeError


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
    assert compile_commands.target_triple(shlex.split(command)) == triple


def test_assembler_flags_last_wins():
    args = ["gcc", "-march=armv7-a", "-mfpu=neon", "-O2", "-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8", "-mthumb"]
    assert compile_commands.assembler_flags(args) == ["-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8"]
    assert compile_commands.assembler_flags(["gcc", "-O2", "-mfpu=auto"]) == []


@pytest.mark.parametrize(
    ("command", "variant"),
    [
        ("gcc -march=armv8.2-a+dotprod -DISAFORGE_VARIANT=dotprod -c a.c", "dotprod"),
        ("gcc -D ISAFORGE_VARIANT=i8mm -c a.c", "i8mm"),
        ("gcc -DISAFORGE_VARIANT=neon -DISAFORGE_VARIANT=fp16 -c a.c", "fp16"),
        ("gcc -DISAFORGE_VARIANT=dotprod -UISAFORGE_VARIANT -c a.c", None),
        ("gcc -DISAFORGE_VARIANT=dotprod -U ISAFORGE_VARIANT -DISAFORGE_VARIANT=sve -c a.c", "sve"),
        ("gcc -DISAFORGE_VARIANT_X=dotprod -DOTHER=ISAFORGE_VARIANT -c a.c", None),
        ("gcc -march=armv8.2-a+dotprod -c a.c", None),
    ],
)
def test_declared_variant(command, variant):
    assert compile_commands.declared_variant(shlex.split(command)) == variant


def test_built_with_keeps_command_order_once_each():
    args = shlex.split("gcc -march=armv8-a -O2 -march=armv8-a -mthumb -march=armv8.2-a -D ISAFORGE_VARIANT=x -DFOO")
    assert compile_commands.built_with(args) == [
        "-march=armv8-a",
        "-mthumb",
        "-march=armv8.2-a",
        "-DISAFORGE_VARIANT=x",
    ]


def test_entries_resolve_their_objects_and_skip_those_without_one(tmp_path):
    commands = [
        {"directory": "sub", "command": "aarch64-linux-gnu-gcc -c a.c -o a.o", "file": "a.c"},
        {"directory": str(tmp_path), "arguments": ["gcc", "-c", "b.c", "-oout/b.o"], "file": "b.c"},
        {"directory": str(tmp_path), "arguments": ["gcc", "-E", "c.c"], "file": "c.c"},  # no object
        {"directory": str(tmp_path), "command": "cc -c d.c", "file": "d.c", "output": "/abs/d.o"},
    ]
    (tmp_path / "compile_commands.json").write_text(json.dumps(commands))
    entries = compile_commands.read_compile_commands(tmp_path)
    assert [e.output for e in entries] == [tmp_path / "sub" / "a.o", tmp_path / "out" / "b.o", Path("/abs/d.o")]
    assert entries[0].args == ("aarch64-linux-gnu-gcc", "-c", "a.c", "-o", "a.o")
    assert [e.file for e in entries] == ["a.c", "b.c", "d.c"]


def test_a_list_that_is_not_of_commands_asks_for_a_reconfigure(tmp_path):
    (tmp_path / "compile_commands.json").write_text('{"directory": "."}')
    with pytest.raises(IsaforgeError, match="is not a list of compile commands; reconfigure it"):
        compile_commands.read_compile_commands(tmp_path)


@pytest.mark.parametrize(
    ("command", "compiler"),
    [
        ("ccache clang-19 --target=aarch64-linux-gnu -c a.c", "clang"),
        ("/usr/bin/arm-linux-gnueabihf-gcc -c a.c", "gcc"),
        ("cc -c clang.c", "gcc"),  # a source named clang is no clang driver
    ],
)
def test_compiler_of_reads_the_driver(command, compiler):
    assert compile_commands.compiler_of(shlex.split(command)) == compiler
