"""QEMU's `-d in_asm,exec,nochain` log read: every translated block with its instructions' addresses and words,
and, with chaining off, one `Trace` line per execution of a block; executions per guest address, optionally over a
window of the run (from one block's first execution to another's)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

IN_INSN = re.compile(r"^0x([0-9a-f]+):\s+([0-9a-f]{8})\b")
TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")


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


def parse_log(lines: Iterable[str], window: tuple[int, int] | None = None) -> ExecLog:
    """Executions per instruction address from `-d in_asm,exec,nochain` output. `window` (start, stop): count only
    the block executions from the first one starting at `start` up to (not including) the first one after it
    starting at `stop`; translations are read throughout."""
    log = ExecLog()
    span = _Window(*window) if window is not None else _Window()
    current: dict[int, tuple[int, ...]] = {}  # block start → addresses of its latest translation
    runs = log.runs
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
            t = TRACE.match(line)
            if t is None or not span.counts(pc := int(t[1], 16)):
                continue
            log.traces += 1
            tb = current.get(pc)
            if tb is None:
                log.unknown_traces += 1
            else:
                runs[tb] += 1
    if block:
        current[block[0]] = tuple(block)
        log.blocks += 1
    for tb, n in runs.items():
        for addr in tb:
            log.executions[addr] += n
    log.window_opened, log.window_closed = span.opened, span.closed
    return log
