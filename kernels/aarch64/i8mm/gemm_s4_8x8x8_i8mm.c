/* int8 × int4 -> int32 GEMM micro-kernel (FEAT_I8MM): 8x8 tile, smmla, 8 k steps per block, on int4 B panels
 * (gemm_s8_8x8x8_i8mm's panels with their blocks in nibble pairs).
 *
 * Operands as gemm_s8_8x8x8_i8mm's: per block A is 64 bytes (vector i: rows 2i, 2i+1 × 8 k), B 64 bytes (vector
 * j: columns 2j, 2j+1 × 8 k), and c<i><j> accumulates the 2x2 block rows 2i, 2i+1 × columns 2j, 2j+1 laid out
 * [r0c0 r0c1 r1c0 r1c1]. A nibble panel's 64 bytes of pair t hold both blocks' B: shl #4 gives block 2t's weights
 * × 16, and #0xF0 block 2t+1's, each smmla's operand as it stands; the sums are 16 times the true ones (|16·w| ≤
 * 128: the int8 bound holds) and shifted back exactly (sshr #4) before C, the bias or the quantized steps.
 *
 * In C rather than assembly: per pair (1024 MACs) 2 A loads and 1 B load of 4 vectors, 8 ALU, 32 smmla and the
 * loop's 2 = 45 instructions with clang 19 (0.044 per MAC; the int8 .S kernel: 0.04). The unpacking leaves no room
 * for the .S kernel's double-buffered register sets (16 accumulators + A 4 + B 4 + an unpacked vector + the mask =
 * 26 of 32). GCC 12 gives 57: 6 ldp and 3 pointer adds for the 3 loads, and 6 accumulator copies its register
 * allocator does not coalesce (no spills).
 */
#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Steps p past `n` bytes; the empty asm hides the pointer's history, so the compilers post-increment it in the
 * loads rather than keep a second pointer (see gemm_s8_1x8x8_i8mm.c). */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* Column pair j (the unpacked B vector u) against the 4 row pairs of one block (a0-a3). */
#define COLUMN(j, u)                       \
    do {                                   \
        const int8x16_t u_ = (u);          \
        c0##j = vmmlaq_s32(c0##j, a0, u_); \
        c1##j = vmmlaq_s32(c1##j, a1, u_); \
        c2##j = vmmlaq_s32(c2##j, a2, u_); \
        c3##j = vmmlaq_s32(c3##j, a3, u_); \
    } while (0)

/* 4 vectors from p, then p += 64. Clang gives one ld1 {4 registers}, [p], #64 for the tuple; GCC 12 spills such
 * tuples to the stack in this loop (and loses 8 registers to copies), so it gets 4 vector loads (2 ldp). */
#if defined(__clang__)
#define LOAD4(p, v0, v1, v2, v3)                                                                    \
    const int8x16x4_t v0##v1 = vld1q_s8_x4(p);                                                      \
    const int8x16_t v0 = v0##v1.val[0], v1 = v0##v1.val[1], v2 = v0##v1.val[2], v3 = v0##v1.val[3]; \
    NEXT(p, 64)
#else
#define LOAD4(p, v0, v1, v2, v3)                                                                           \
    const int8x16_t v0 = vld1q_s8(p), v1 = vld1q_s8(p + 16), v2 = vld1q_s8(p + 32), v3 = vld1q_s8(p + 48); \
    NEXT(p, 64)
#endif

/* One block: A's 64 bytes at pa against the 4 unpacked B vectors, column by column (few unpacked vectors live). */
#define BLOCK(u0, u1, u2, u3)      \
    do {                           \
        LOAD4(pa, a0, a1, a2, a3); \
        COLUMN(0, u0);             \
        COLUMN(1, u1);             \
        COLUMN(2, u2);             \
        COLUMN(3, u3);             \
    } while (0)

/* The tile's 8 rows of true sums, columns 0-3 in r[2i], 4-7 in r[2i + 1], through the quantized steps into C.
 * Not inlined: kept out of the kernel, it leaves the hot loop's register allocation alone. */
static __attribute__((noinline)) void store_quantized(const isf_epilogue *ep, void *c, size_t ldc,
                                                      const int32x4_t r[16]) {
    const isf_qn_cols c0 = isf_qn_cols_load(ep, 0), c1 = isf_qn_cols_load(ep, 4);
    if (ep->steps & ISF_EPILOGUE_TO_S8) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        for (size_t i = 0; i < 8; i++) {
            const isf_qn_row rw = isf_qn_row_load(ep, i);
            const int32x4_t lo = isf_qn_sums(ep, &c0, rw, i, 0, r[2 * i]);
            const int32x4_t hi = isf_qn_sums(ep, &c1, rw, i, 4, r[2 * i + 1]);
            vst1_s8((int8_t *)c + i * ldc,
                    isf_qn_s8_narrow8(&o, isf_qn_s8_wide(&o, &c0, lo), isf_qn_s8_wide(&o, &c1, hi)));
        }
        return;
    }
    const isf_qn_clamp o = isf_qn_clamp_load(ep);
    for (size_t i = 0; i < 8; i++) {
        const isf_qn_row rw = isf_qn_row_load(ep, i);
        float *out = (float *)c + i * ldc;
        vst1q_f32(out, isf_qn_f32(&o, &c0, rw, isf_qn_sums(ep, &c0, rw, i, 0, r[2 * i])));
        vst1q_f32(out + 4, isf_qn_f32(&o, &c1, rw, isf_qn_sums(ep, &c1, rw, i, 4, r[2 * i + 1])));
    }
}

/* Rows 2i (columns 0-3, 4-7) and 2i+1 from the blocks c<i>0..c<i>3, true sums (the 16× undone). */
#define UNZIP(i)                                                                                               \
    r[4 * i + 0] = vshrq_n_s32(                                                                                \
        vreinterpretq_s32_s64(vuzp1q_s64(vreinterpretq_s64_s32(c##i##0), vreinterpretq_s64_s32(c##i##1))), 4); \
    r[4 * i + 1] = vshrq_n_s32(                                                                                \
        vreinterpretq_s32_s64(vuzp1q_s64(vreinterpretq_s64_s32(c##i##2), vreinterpretq_s64_s32(c##i##3))), 4); \
    r[4 * i + 2] = vshrq_n_s32(                                                                                \
        vreinterpretq_s32_s64(vuzp2q_s64(vreinterpretq_s64_s32(c##i##0), vreinterpretq_s64_s32(c##i##1))), 4); \
    r[4 * i + 3] = vshrq_n_s32(                                                                                \
        vreinterpretq_s32_s64(vuzp2q_s64(vreinterpretq_s64_s32(c##i##2), vreinterpretq_s64_s32(c##i##3))), 4)

ISF_UKERNEL(gemm_s4_8x8x8_i8mm) {
    const int8_t *pa = a;
    const int8_t *pb = b;
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
    int32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;

    for (size_t n = k_blocks / 2; n > 0; n--) { /* k_blocks is even */
        LOAD4(pb, g0, g1, g2, g3);
        BLOCK(vshlq_n_s8(g0, 4), vshlq_n_s8(g1, 4), vshlq_n_s8(g2, 4), vshlq_n_s8(g3, 4));     /* block 2t */
        BLOCK(vandq_s8(g0, mask), vandq_s8(g1, mask), vandq_s8(g2, mask), vandq_s8(g3, mask)); /* 2t+1 */
    }

    int32x4_t r[16];
    UNZIP(0);
    UNZIP(1);
    UNZIP(2);
    UNZIP(3);
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        store_quantized(ep, c, ldc, r);
        return;
    }
    /* int32 C: accumulate, then BIAS (wrapping, as vector adds do); the driver never asks for CLAMP. */
    const int32x4_t b0 = ep->steps & ISF_EPILOGUE_BIAS ? vld1q_s32(ep->bias) : z;
    const int32x4_t b1 = ep->steps & ISF_EPILOGUE_BIAS ? vld1q_s32((const int32_t *)ep->bias + 4) : z;
    for (size_t i = 0; i < 8; i++) {
        int32_t *out = (int32_t *)c + i * ldc;
        int32x4_t lo = vaddq_s32(r[2 * i], b0), hi = vaddq_s32(r[2 * i + 1], b1);
        if (accumulate) {
            lo = vaddq_s32(lo, vld1q_s32(out));
            hi = vaddq_s32(hi, vld1q_s32(out + 4));
        }
        vst1q_s32(out, lo);
        vst1q_s32(out + 4, hi);
    }
}
