"""QEMU's `-d in_asm,exec,nochain` log read: every translated block with its instructions' addresses and words,
and, with chaining off, one `Trace` line per execution of a block; executions per guest address, optionally over a
window of the run (from one block's first execution to another's).

Given the library's address range, only its blocks count as executions; the code it calls outside (libc: memcpy,
malloc, free) is counted apart, per call: a call starts when a thread leaves the library other than by `ret`, its
instructions are summed under the callee's entry address, and it ends when the callee returns (a `ret` at the call's
own depth: the `bl`/`blr` and `ret` of the blocks outside are followed) or when the thread is back in the library (a
callback). Leaving by `ret` (back to the program that called the library) starts nothing."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

IN_INSN = re.compile(r"^0x([0-9a-f]+):\s+([0-9a-f]{8})\b")
TRACE = re.compile(r"^Trace (\d+): 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
# A64 encodings of what ends a block and moves the call depth: bl; blr (and blraaz/blrabz); ret (and retaa/retab).
BL_MASK, BL = 0xFC000000, 0x94000000
BLR_MASK, BLR = 0xFFFFF01F, (0xD63F0000, 0xD63F001F)
RET_MASK, RET, RET_PAC = 0xFFFFFC1F, 0xD65F0000, (0xD65F0BFF, 0xD65F0FFF)
LIBRARY = -1  # _CallsOut.owner of a block of the library itself


def is_call(encoding: str | None) -> bool:
    w = int(encoding or "0", 16)
    return (w & BL_MASK) == BL or (w & BLR_MASK) in BLR


def is_return(encoding: str | None) -> bool:
    w = int(encoding or "0", 16)
    return (w & RET_MASK) == RET or w in RET_PAC


@dataclass
class ExecLog:
    executions: Counter[int] = field(default_factory=Counter)  # guest address → times executed
    encodings: dict[int, str] = field(default_factory=dict)  # guest address → instruction word as QEMU read it
    runs: Counter[tuple[int, ...]] = field(default_factory=Counter)  # a translation's addresses → its executions
    blocks: int = 0  # translations logged
    traces: int = 0  # block executions logged
    unknown_traces: int = 0  # executions of a block whose translation was not in the log
    window_opened: bool = False  # with a window: its start block ran
    window_closed: bool = False  # with a window: its stop block ran after it
    called: Counter[int] = field(default_factory=Counter)  # with a library: callee entry → instructions in its calls


@dataclass
class _Call:
    """A call out of the library in progress on one thread: its callee's entry and how deep inside it the thread is."""

    callee: int
    depth: int = 0


@dataclass
class _CallsOut:
    """Whose each executed block is, thread by thread: the library's, a call out of it, or the program's own."""

    lo: int
    hi: int  # exclusive
    calls: dict[str, _Call] = field(default_factory=dict)  # thread → its call in progress
    returned: dict[str, bool] = field(default_factory=dict)  # thread → it left the library (or a call) by ret

    def owner(self, thread: str, tb: tuple[int, ...], encodings: dict[int, str]) -> int | None:
        """LIBRARY, the callee entry of the call the block runs in, or None (the program's own code)."""
        last = encodings.get(tb[-1])
        if self.lo <= tb[0] < self.hi:
            self.calls.pop(thread, None)
            self.returned[thread] = is_return(last)
            return LIBRARY
        call = self.calls.get(thread)
        if call is None:
            if self.returned.get(thread, True):
                return None
            call = self.calls[thread] = _Call(tb[0])
        if is_call(last):
            call.depth += 1
        elif is_return(last) and call.depth:
            call.depth -= 1
        elif is_return(last):
            del self.calls[thread]
            self.returned[thread] = True  # back in its caller, which may be the program (a tail call out)
        return call.callee


@dataclass
class _Window:
    """Which block executions count: from the first starting at `start` to the first after it starting at `stop`;
    every one when `start` is None."""

    start: int | None = None
    stop: int | None = None
    opened: bool = False
    closed: bool = False

    def counts(self, pc: int) -> bool:
        if self.start is None:
            return True
        if not self.opened and pc == self.start:
            self.opened = True
        elif self.opened and not self.closed and pc == self.stop:
            self.closed = True
        return self.opened and not self.closed


def _executed(
    log: ExecLog,
    trace: re.Match[str] | None,
    current: dict[int, tuple[int, ...]],
    span: _Window,
    calls_out: _CallsOut | None,
) -> None:
    """One `Trace` line: the block's execution counted where it belongs, if in the window."""
    if trace is None or not span.counts(pc := int(trace[2], 16)):
        return
    log.traces += 1
    tb = current.get(pc)
    if tb is None:
        log.unknown_traces += 1
        return
    owner = LIBRARY if calls_out is None else calls_out.owner(trace[1], tb, log.encodings)
    if owner == LIBRARY:
        log.runs[tb] += 1
    elif owner is not None:
        log.called[owner] += len(tb)


def parse_log(
    lines: Iterable[str], window: tuple[int, int] | None = None, library: tuple[int, int] | None = None
) -> ExecLog:
    """Executions per instruction address from `-d in_asm,exec,nochain` output. `window` (start, stop): count only
    the block executions from the first one starting at `start` up to (not including) the first one after it
    starting at `stop`; translations are read throughout. `library` (lo, hi): only blocks in it are executions, the
    instructions of its calls out go to `called`."""
    log = ExecLog()
    span = _Window(*window) if window is not None else _Window()
    calls_out = _CallsOut(*library) if library is not None else None
    current: dict[int, tuple[int, ...]] = {}  # block start → addresses of its latest translation
    block: list[int] | None = None
    for line in lines:
        if block is not None:
            m = IN_INSN.match(line)
            if m:
                addr = int(m[1], 16)
                block.append(addr)
                log.encodings[addr] = m[2]
                continue
            if block:
                current[block[0]] = tuple(block)
                log.blocks += 1
            block = None
        if line.startswith("IN:"):
            block = []
        elif line.startswith("Trace "):
            _executed(log, TRACE.match(line), current, span, calls_out)
    if block:
        current[block[0]] = tuple(block)
        log.blocks += 1
    for tb, n in log.runs.items():
        for addr in tb:
            log.executions[addr] += n
    log.window_opened, log.window_closed = span.opened, span.closed
    return log
