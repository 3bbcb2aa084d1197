"""Where each load of the micro-kernels reads from: the pointer its address comes from, by a small data-flow pass
over llvm-objdump's disassembly.

A micro-kernel is entered as `fn(k_blocks /*x0*/, a /*x1*/, b /*x2*/, c /*x3*/, ldc /*x4*/, accumulate /*w5*/,
ep /*x6*/)` (kernels/runtime/isf_internal.h ISF_UKERNEL): x1 points into A's panel, x2 into the packed weights
(B), x3 into C, x6 at the epilogue. Those labels flow through moves, additions of scalars, address writebacks and
SVE's addvl/inc*; a pointer loaded from the epilogue struct (bias, scales, partial sums) is labelled epilogue.
Every register's label is merged over the paths reaching an instruction, and a direct call or branch into another
function carries the caller's registers into it (the static helpers, e.g. quant_tile). A load is labelled by the
registers of its address. The pass is conservative: whatever it cannot follow (two different pointers meeting, a
pointer reloaded from the stack, arithmetic it does not model) is UNKNOWN, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from isaforge.bench.measure.mca.objcode import Insn

A, B, C, EPILOGUE, STACK, CONSTANT = "a", "weights", "c", "epilogue", "stack", "constant"
SCALAR, UNKNOWN = "scalar", "unknown"  # a number (not a pointer); no label can be given
POINTERS = frozenset({A, B, C, EPILOGUE, STACK, CONSTANT})
ENTRY: dict[str, str] = {"x0": SCALAR, "x1": A, "x2": B, "x3": C, "x4": SCALAR, "x5": SCALAR, "x6": EPILOGUE,
                         "sp": STACK}  # fmt: skip
CALL_CLOBBERED = (*(f"x{i}" for i in range(19)), "x30")  # AAPCS64: what a call may leave anything in

X_REG = re.compile(r"^(?:x(\d+)|sp|fp|lr)$")
W_REG = re.compile(r"^(?:w\d+|wsp|xzr|wzr)$")  # 32-bit values and zero: never a pointer
# Instructions whose result is the pointer of their sources (a moved or offset pointer); anything else writing an
# X register gives a scalar from scalars and UNKNOWN from a pointer.
# (orr, and, bic: a pointer's low bits set or cleared, as a stack slot's address or an alignment.)
KEEPS_POINTER = frozenset({"mov", "add", "adds", "sub", "subs", "addvl", "addpl", "madd", "msub", "umaddl",
                           "smaddl", "csel", "movk", "orr", "and", "bic"})  # fmt: skip
NO_DESTINATION = frozenset({"cmp", "cmn", "tst", "ccmp", "ccmn", "fcmp", "fcmpe", "fccmp", "fccmpe", "b", "bl",
                            "br", "blr", "ret", "cbz", "cbnz", "tbz", "tbnz", "nop", "prfm", "prfum", "hint",
                            "msr", "dmb", "dsb", "isb", "brk", "udf", "svc"})  # fmt: skip
INC_DEC = re.compile(r"^(?:inc|dec|sqinc|sqdec|uqinc|uqdec)[bhwd]$")  # SVE: xd += count, in place
ENDS_PATH = frozenset({"ret", "br", "b", "brk", "udf"})  # no fall-through ("b" only unconditional)


def _reg(token: str) -> str | None:
    """The tracked name of an X register (x29 for fp, x30 for lr), else None."""
    m = X_REG.match(token.strip())
    if m is None:
        return None
    return {"fp": "x29", "lr": "x30"}.get(token.strip(), token.strip())


def join(labels: Iterable[str]) -> str:
    """The label of a value computed from values with these labels: the one pointer among scalars, SCALAR when
    there is none, UNKNOWN when any is unknown or two pointers meet."""
    found = set(labels)
    if UNKNOWN in found:
        return UNKNOWN
    pointers = found & POINTERS
    if len(pointers) > 1:
        return UNKNOWN
    return next(iter(pointers), SCALAR)


@dataclass(frozen=True)
class Address:
    """A memory operand: its base and index registers' tokens, and the register written back, if any."""

    registers: tuple[str, ...]
    writeback: str | None
    post_index: str | None  # a post-index register (`[x2], x8`)


def memory_operand(insn: Insn) -> tuple[int, Address] | None:
    """The position of `insn`'s `[...]` operand and what it addresses with."""
    for i, op in enumerate(insn.operands):
        if op.startswith("["):
            inner = op[1 : op.index("]")]
            tokens = tuple(t.strip() for t in inner.split(","))
            registers = tuple(t for t in tokens if not t.startswith("#") and " " not in t)
            post = insn.operands[i + 1] if i + 1 < len(insn.operands) else None
            pre = op.rstrip().endswith("!")
            base = _reg(tokens[0])
            writes = base if (pre or post is not None) else None
            post_reg = post if post is not None and not post.startswith("#") else None
            return i, Address(registers, writes, post_reg)
    return None


State = dict[str, str]


def _label(state: State, token: str) -> str:
    if W_REG.match(token.strip()) or token.strip().startswith(("#", "z", "v", "p")):
        return SCALAR  # 32-bit registers, immediates, vector offsets: numbers
    reg = _reg(token)
    return state.get(reg, UNKNOWN) if reg else SCALAR


def address_label(state: State, address: Address) -> str:
    """What a memory operand points into: its base joined with its index; a vector base is UNKNOWN."""
    if address.registers and address.registers[0].startswith("z"):
        return UNKNOWN
    label = join(_label(state, r) for r in address.registers)
    return UNKNOWN if label == SCALAR else label  # a number used as an address: nothing says where


def _loaded(source: str) -> str:
    """The label of an X register loaded from memory labelled `source`: the epilogue struct holds pointers into
    the epilogue's arrays, A, B and C hold numbers, the stack holds anything (spills), a constant may be an
    address (GOT)."""
    if source in (A, B, C):
        return SCALAR
    if source in (EPILOGUE, CONSTANT):
        return source
    return UNKNOWN


def _write(state: State, token: str, label: str) -> None:
    """`token` gets `label`; a W destination zeroes its X register's top half: a scalar."""
    if re.fullmatch(r"w\d+", token.strip()):
        state["x" + token.strip()[1:]] = SCALAR
    elif (reg := _reg(token)) is not None:
        state[reg] = label


def step(insn: Insn, state: State) -> State:
    """The registers' labels after `insn` (a new dict)."""
    out = dict(state)
    m, ops = insn.mnemonic, insn.operands
    memory = memory_operand(insn)
    if memory is not None:
        at, address = memory
        source = address_label(state, address)
        if m.startswith("ld"):  # a store writes no register but its base (and W status registers, untracked)
            for dest in ops[:at]:
                _write(out, dest, _loaded(source))
        if address.writeback is not None:
            back = [state.get(address.writeback, UNKNOWN)]
            if address.post_index is not None:
                back.append(_label(state, address.post_index))
            out[address.writeback] = join(back)
        return out
    if m in ("bl", "blr"):
        for reg in CALL_CLOBBERED:
            out[reg] = UNKNOWN
        return out
    if m in NO_DESTINATION or m.startswith("b.") or not ops:
        return out
    if _reg(ops[0]) is None:  # a W destination is a scalar; vector and predicate registers are not tracked
        _write(out, ops[0], SCALAR)
        return out
    _write(out, ops[0], _result(m, ops, state))
    return out


def _result(m: str, ops: Sequence[str], state: State) -> str:
    """The label an ALU instruction gives its X destination ops[0]."""
    if m in ("adrp", "adr"):
        return CONSTANT
    if INC_DEC.match(m) or m == "movk":
        return state.get(_reg(ops[0]) or "", UNKNOWN)
    sources = [_label(state, t) for t in ops[1:] if _reg(t) or W_REG.match(t.strip())]
    if m in KEEPS_POINTER:
        if m in ("sub", "subs") and len(sources) > 1 and sources[1] != SCALAR:
            return UNKNOWN  # a pointer subtracted: a distance, or a pointer this pass cannot name
        return join(sources)
    return SCALAR if all(s == SCALAR for s in sources) else UNKNOWN


def _meet(x: str, y: str) -> str:
    """One register's labels from two paths: the same, or a pointer and a number (`p = cond ? ep->bias : NULL`:
    the number is never dereferenced, as no number here is an address), else UNKNOWN."""
    if x == y:
        return x
    if {x, y} - POINTERS == {SCALAR}:
        return x if y == SCALAR else y
    return UNKNOWN


def merge(a: State | None, b: State) -> State:
    """Two paths' registers, each as _meet gives it."""
    if a is None:
        return dict(b)
    return {r: _meet(a.get(r, UNKNOWN), b.get(r, UNKNOWN)) for r in set(a) | set(b)}


@dataclass(frozen=True)
class Function:
    start: int
    end: int  # exclusive
    name: str


def _function_of(functions: Sequence[Function], addr: int) -> Function | None:
    return next((f for f in functions if f.start <= addr < f.end), None)


def call_target(insn: Insn) -> int | None:
    """A direct branch's or call's target (objcode keeps branch targets, not those of `bl`)."""
    if insn.target is not None or insn.mnemonic != "bl" or not insn.operands:
        return insn.target
    ref = re.match(r"^(?:0x)?([0-9a-f]+)\b", insn.operands[-1])
    return int(ref[1], 16) if ref else None


def _successors(insn: Insn, nxt: int | None, fn: Function) -> list[int]:
    """Addresses inside `fn` that may run after `insn`."""
    out = []
    unconditional = insn.mnemonic in ENDS_PATH
    if nxt is not None and not unconditional:
        out.append(nxt)
    if insn.target is not None and insn.mnemonic != "bl" and fn.start <= insn.target < fn.end:
        out.append(insn.target)
    return out


def _flow(fn: Function, body: Sequence[Insn], entry: State) -> tuple[dict[int, State], list[tuple[int, State]]]:
    """Each instruction's incoming labels in one function from `entry`, and the (callee, labels) its direct calls
    and branches out of it hand on."""
    index = {insn.addr: i for i, insn in enumerate(body)}
    states: dict[int, State] = {body[0].addr: dict(entry)} if body else {}
    work = [body[0].addr] if body else []
    out_calls: list[tuple[int, State]] = []
    while work:
        addr = work.pop()
        i = index[addr]
        insn = body[i]
        after = step(insn, states[addr])
        target = call_target(insn)
        if target is not None and not fn.start <= target < fn.end:
            handed = dict(states[addr])
            handed["x30"] = UNKNOWN
            out_calls.append((target, handed))
        nxt = body[i + 1].addr if i + 1 < len(body) else None
        for succ in _successors(insn, nxt, fn):
            merged = merge(states.get(succ), after)
            if merged != states.get(succ):
                states[succ] = merged
                work.append(succ)
    return states, out_calls


def classify_loads(insns: Mapping[int, Insn], functions: Sequence[Function], roots: Iterable[int]) -> dict[int, str]:
    """The label of every load in the functions entered at `roots` (with the micro-kernel ABI) and in every
    function of `functions` they call or branch into, by address; a load on no path from an entry is UNKNOWN."""
    ordered = sorted(functions, key=lambda f: f.start)
    bodies = {f.start: [insns[a] for a in sorted(a for a in insns if f.start <= a < f.end)] for f in ordered}
    entries: dict[int, State] = {}
    work: list[int] = []
    for root in roots:
        entries[root] = merge(entries.get(root), ENTRY)
        work.append(root)
    labels: dict[int, str] = {}
    while work:
        fn = _function_of(ordered, work.pop())
        if fn is None or not bodies[fn.start]:
            continue
        states, calls = _flow(fn, bodies[fn.start], entries[fn.start])
        for insn in bodies[fn.start]:
            if insn.is_load:
                st = states.get(insn.addr)
                mem = memory_operand(insn)
                labels[insn.addr] = address_label(st, mem[1]) if st is not None and mem else _literal(insn, st)
        for target, handed in calls:
            callee = _function_of(ordered, target)
            if callee is None or target != callee.start:
                continue  # outside the analysed code (libc), or into the middle of a function: not followed
            merged = merge(entries.get(target), handed)
            if merged != entries.get(target):
                entries[target] = merged
                work.append(target)
    return labels


def _literal(insn: Insn, state: State | None) -> str:
    """A load without a `[...]` operand reads a PC-relative literal (a constant); one on no path, UNKNOWN."""
    if state is None:
        return UNKNOWN
    return CONSTANT
