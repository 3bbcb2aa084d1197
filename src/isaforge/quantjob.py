"""The job format of tests/kernels/quant_runner.c, the one program that runs quantized plans (and gemm_s8's and
gemm_s4's, which take no quant) for both the tests' numpy oracle and the bench's counts.

A job file is jobs one after another, each (little-endian): a header of u32 op, m, n, k, layout, flags, mode, count
of w_scales, has_bias; f32 out_min, out_max, a_scale; i32 a_zero_point; f32 c_scale; i32 c_zero_point; u32 w_bits,
w_block; a 64-byte kernel name ("" dispatch's choice); then w_scales (f32), A (m×k), W (k×n, or n×k with the NK
layout: int8, or int4 two per byte, ceil(n·k / 2) bytes), bias (n × 4 bytes, zeros when there is none). The results
file has, per job: i32 status, i32 whether the bytes around and between C's rows stayed untouched, then C (m×n).
The runner prints one line per job on stdout: {"kernel": "<the kernel the plan ran>"}.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from isaforge import quant
from isaforge.catalogue import load

HEAD = struct.Struct("<9I3fifi2I64s")
CLAMP_FLAG = 1  # ISF_GEMM_CLAMP
KN_LAYOUT, NK_LAYOUT = 0, 1  # ISF_WEIGHTS_KN, ISF_WEIGHTS_NK
RUN, REVERSED_TILES, REIMPORTED = 0, 1, 2  # isf_gemm_run; its tiles in reverse order; after an export and import
NO_QUANT = quant.QuantParams(np.zeros(0, np.float32), a_scale=0.0, c_scale=0.0)


@dataclass(frozen=True)
class QuantJob:
    op: str
    kernel: str  # "": dispatch's choice
    a: np.ndarray  # [m][k]: int8, or fp32 for the dynamic ops
    w_kn: np.ndarray  # [k][n] int8 (−8…7 for int4 weights, packed two per byte here)
    params: quant.QuantParams = NO_QUANT  # NO_QUANT for the ops that take none
    bias: np.ndarray | None = None  # int32, or fp32 for the dynamic ops
    clamp: tuple[float, float] | None = None
    nk: bool = False  # W given as [n][k]
    mode: int = RUN

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.a.shape[0], self.w_kn.shape[1], self.w_kn.shape[0]

    def to_bytes(self) -> bytes:
        m, n, k = self.shape
        p = self.params
        lo, hi = self.clamp if self.clamp is not None else (0.0, 0.0)
        scales = np.asarray(p.w_scales, dtype=np.float32)
        head = HEAD.pack(
            load().ops[self.op].index, m, n, k, NK_LAYOUT if self.nk else KN_LAYOUT,
            CLAMP_FLAG if self.clamp else 0, self.mode, scales.size, int(self.bias is not None), lo, hi,
            p.a_scale, p.a_zero_point, p.c_scale, p.c_zero_point, p.w_bits, p.w_block, self.kernel.encode(),
        )  # fmt: skip
        w = np.ascontiguousarray(self.w_kn.T if self.nk else self.w_kn)
        weights = quant.pack_int4(w) if load().ops[self.op].b.element_bits == 4 else w.tobytes()
        bias_type = np.float32 if load().ops[self.op].a.kind == "float" else np.int32
        bias = (self.bias if self.bias is not None else np.zeros(n)).astype(bias_type)
        return head + scales.tobytes() + self.a.tobytes() + weights + bias.tobytes()


@dataclass(frozen=True)
class QuantOutput:
    status: int
    guards_kept: bool
    c: bytes  # m×n elements of the op's C type
    kernel: str  # the kernel the plan ran (from the runner's stdout; "" when not given)


def write_jobs(path: Path, jobs: Sequence[QuantJob]) -> None:
    path.write_bytes(b"".join(job.to_bytes() for job in jobs))


def read_results(path: Path, jobs: Sequence[QuantJob], stdout: str = "") -> list[QuantOutput]:
    """Each job's status, guard flag and C, in order; with the runner's stdout, the kernel each ran."""
    data, at, out = path.read_bytes(), 0, []
    kernels = [json.loads(line)["kernel"] for line in stdout.splitlines() if line.startswith("{")]
    for i, job in enumerate(jobs):
        m, n, _ = job.shape
        status, guards = struct.unpack_from("<ii", data, at)
        size = m * n * np.dtype(load().ops[job.op].c.numpy).itemsize
        c = data[at + 8 : at + 8 + size]
        out.append(QuantOutput(status, bool(guards), c, kernels[i] if i < len(kernels) else ""))
        at += 8 + size
    return out
