"""isaforge.quantjob: quant_runner's job and results files, as the tests and the bench write and read them."""

from __future__ import annotations

import struct

import numpy as np

from isaforge import quant, quantjob
from isaforge.catalogue import load

A = np.arange(-6, 6, dtype=np.int8).reshape(2, 6)  # m = 2, k = 6
W = np.arange(-8, 7, dtype=np.int8)[:12].reshape(6, 2)  # k = 6, n = 2: int4 values


def test_a_job_is_its_header_then_scales_a_packed_weights_and_bias():
    params = quant.QuantParams(np.array([0.5, 0.25], np.float32), a_scale=0.1, a_zero_point=-3, c_scale=2.0)
    job = quantjob.QuantJob("gemm_s4", "", A, W, params, np.array([7, -7], np.int32))
    data = job.to_bytes()
    head = quantjob.HEAD.unpack_from(data)
    assert head[:9] == (load().ops["gemm_s4"].index, 2, 2, 6, quantjob.KN_LAYOUT, 0, quantjob.RUN, 2, 1)
    assert head[-1] == b"\0" * 64  # dispatch's choice
    at = quantjob.HEAD.size
    assert np.frombuffer(data[at : at + 8], np.float32).tolist() == [0.5, 0.25]
    assert data[at + 8 : at + 20] == A.tobytes()
    assert data[at + 20 : at + 26] == quant.pack_int4(W)  # 12 weights, two per byte
    assert np.frombuffer(data[at + 26 :], np.int32).tolist() == [7, -7]


def test_the_nk_layout_sends_w_transposed_and_a_job_without_bias_sends_zeros():
    job = quantjob.QuantJob("gemm_s8", "gemm_s8_4x4_ref", A, W.astype(np.int8) * 10, nk=True)
    data = job.to_bytes()
    assert quantjob.HEAD.unpack_from(data)[4] == quantjob.NK_LAYOUT
    weights = data[quantjob.HEAD.size + A.nbytes : quantjob.HEAD.size + A.nbytes + W.size]
    assert weights == np.ascontiguousarray((W * 10).T).tobytes()
    assert data[-8:] == b"\0" * 8


def test_results_are_read_job_by_job_with_the_kernel_each_ran(tmp_path):
    jobs = [quantjob.QuantJob("gemm_qs8", "", A, W), quantjob.QuantJob("gemm_s8", "", A[:1], W)]
    c1, c2 = bytes(range(4)), struct.pack("<2i", 5, -5)  # int8 C of 2×2, int32 C of 1×2
    path = tmp_path / "results"
    path.write_bytes(struct.pack("<ii", 0, 1) + c1 + struct.pack("<ii", 3, 0) + c2)
    stdout = '{"kernel": "gemm_s8_8x8x8_i8mm"}\n{"kernel": "gemm_s8_4x4_ref"}\n'
    first, second = quantjob.read_results(path, jobs, stdout)
    assert (first.status, first.guards_kept, first.c, first.kernel) == (0, True, c1, "gemm_s8_8x8x8_i8mm")
    assert (second.status, second.guards_kept, second.c, second.kernel) == (3, False, c2, "gemm_s8_4x4_ref")
