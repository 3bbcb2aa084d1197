"""A statically linked program and libisaforge's code in it: the address range QEMU's log is cut to, the functions
in it, and the names of what it calls outside (libc, static glibc's IFUNCs through their .iplt stubs)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from isaforge.bench import run_tool
from isaforge.bench.measure.mca import objcode
from isaforge.builds import Build
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError

LLVM_NM = "llvm-nm-19"
LLVM_READELF = "llvm-readelf-19"
RUNNERS = "tests/kernels"  # the tests' runners, in the checkout
RUNTIME = "kernels/runtime"  # the internal header the runners include
LIBRARY = "libisaforge.a"
MAX_ALIGN_GAP = 64  # bytes of padding tolerated between the library's functions


def link_static_runner(build: Build, directory: Path, program: str, out: Path) -> Path:
    """One of the tests' runners (tests/kernels/<program>.c) compiled and linked statically with the build's compiler
    and its libisaforge.a: the bench builds what it runs from the runner's source, so that libisaforge's code sits at
    fixed addresses, and reads nothing of the build's test targets."""
    if build.toolchain is None:
        raise IsaforgeError("bench counts instructions of cross builds only")
    source, lib = build.root / RUNNERS / f"{program}.c", directory / LIBRARY
    for path in (source, lib):
        if not path.is_file():
            raise IsaforgeError(f"{path} is missing; build {build.name} first (isaforge build) in a checkout")
    cat, tc = load(), build.toolchain
    cmd = [*tc.compiler.command(tc.arch), *tc.compiler.link_args, *cat.baseline_flags(tc.arch.name, tc.compiler.name),
           "-std=c11", "-O2", f"-I{build.root / 'include'}", f"-I{build.root / RUNTIME}", "-static", "-pthread",
           str(source), str(lib), "-o", str(out)]  # fmt: skip
    run_tool(cmd, f"static link of {program} ({build.name})")
    return out


@dataclass(frozen=True)
class CodeRange:
    lo: int
    hi: int  # exclusive
    functions: tuple[tuple[int, int, str], ...]  # (start, end, name), sorted

    def function_at(self, addr: int) -> str:
        for start, end, name in self.functions:
            if start <= addr < end:
                return name
        return "?"


def parse_nm(text: str) -> list[tuple[int, int, str, str]]:
    """`llvm-nm -S` lines → (address, size, type, name); lines without a size are skipped."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and all(re.fullmatch(r"[0-9a-f]+", p) for p in parts[:2]):
            out.append((int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]))
    return out


def code_range(exe: Path, lib: Path) -> CodeRange:
    """From the executable's symbol table: the isf_* functions' span, widened over the library's other (static)
    functions that sit right next to it."""
    lib_nm = run_tool([LLVM_NM, "--defined-only", str(lib)], f"symbols of {lib.name}")
    lib_names = {p[-1] for p in map(str.split, lib_nm.splitlines()) if len(p) >= 2 and p[-2] in "tT"}
    exe_nm = run_tool([LLVM_NM, "-S", "--defined-only", str(exe)], f"symbols of {exe.name}")
    funcs = sorted((a, a + s, n) for a, s, t, n in parse_nm(exe_nm) if t in "tT" and s > 0)
    isf = [f for f in funcs if f[2].startswith("isf_")]
    if not isf:
        raise IsaforgeError(f"{exe.name} has no isf_* functions in its symbol table (stripped?)")
    lo, hi = min(f[0] for f in isf), max(f[1] for f in isf)
    while True:  # library functions adjacent to the span (a static function last in its object, say)
        new_lo, new_hi = lo, hi
        for start, end, name in funcs:
            if name in lib_names and hi <= start <= hi + MAX_ALIGN_GAP:
                new_hi = max(new_hi, end)
            if name in lib_names and lo - MAX_ALIGN_GAP <= end <= lo:
                new_lo = min(new_lo, start)
        if (new_lo, new_hi) == (lo, hi):
            break
        lo, hi = new_lo, new_hi
    inside = tuple(f for f in funcs if lo <= f[0] < hi)
    return CodeRange(lo, hi, inside)


IRELATIVE = re.compile(r"^([0-9a-f]+)\s+[0-9a-f]+\s+R_AARCH64_IRELATIVE\s+([0-9a-f]+)")
ADRP = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{8}\s+)?adrp\s+x16, 0x([0-9a-f]+)")
LDR_SLOT = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{8}\s+)?ldr\s+x17, \[x16, #0x([0-9a-f]+)\]")


def external_names(exe: Path) -> dict[int, str]:
    """Function names by entry address for everything outside libisaforge it may call: symbols, and static glibc's
    IFUNC stubs (.iplt or .plt: adrp x16 + ldr x17 from a GOT slot whose R_AARCH64_IRELATIVE resolver is the IFUNC
    symbol)."""
    nm = run_tool([LLVM_NM, "-S", "--defined-only", str(exe)], f"symbols of {exe.name}")
    aliases: dict[int, list[str]] = {}
    for addr, _size, kind, name in parse_nm(nm):
        if kind in "tTiWw":
            aliases.setdefault(addr, []).append(name)
    # the public spelling of each (free, not __free or __libc_free)
    names = {
        a: min(ns, key=lambda n: (len(n) - len(n.lstrip("_")), "libc_" in n, len(n), n)) for a, ns in aliases.items()
    }
    relocs = run_tool([LLVM_READELF, "-r", str(exe)], f"relocations of {exe.name}")
    resolver = {int(m[1], 16): int(m[2], 16) for m in map(IRELATIVE.match, relocs.splitlines()) if m}
    if resolver:
        stubs = run_tool(  # lld puts them in .iplt, GNU ld in .plt
            [objcode.LLVM_OBJDUMP, "-d", "-j", ".iplt", "-j", ".plt", str(exe)], f"disassembly of {exe.name}'s .iplt"
        )
        page: tuple[int, int] | None = None
        for line in stubs.splitlines():
            if m := ADRP.match(line):
                page = (int(m[1], 16), int(m[2], 16))
            elif (m := LDR_SLOT.match(line)) and page is not None:
                target = resolver.get(page[1] + int(m[2], 16))
                if target is not None:
                    names[page[0]] = names.get(target, f"ifunc@0x{target:x}")
                page = None
    return names
