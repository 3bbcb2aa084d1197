/* int8 × int4 → int32 4×8 tile, KR = 4, VSDOT by scalar, on gemm_s8_4x8x4_dotprod's A panels and nibble B panels
 * (isf_internal.h, "int4 B panels"), in C (the int8 kernel is assembly; the store shares isf_quant_neon.h).
 *
 * Per pair of blocks: A is 32 bytes, loaded by VLD4.32 as 4 D registers, register r = row r's 4 bytes of the even
 * block (lane 0) and of the odd one (lane 1), so every VSDOT scalar is a lane of a D register. B is 32 bytes,
 * columns 0–3 then 4–7, each byte the even block's value in its low nibble and the odd block's in its high one:
 * VSHL #4 and VAND 0xF0 make them the two blocks' int8 values times 16 (exact, −128…112), and 16 VSDOT add them
 * into the 8 accumulators (row r, columns 4j..4j+3). The sums are 16 times the true ones (the int32 range of int8
 * weights, since 16·|w| ≤ 128) and an arithmetic shift right by 4 gives them back exactly before the store.
 * Per pair (256 MACs): 1 A load + 2 B loads + 4 unpacking instructions + 16 VSDOT.
 * Hot loop at -O3: 25 instructions per 256 MACs with GCC 12, 27 with clang 19 (gemm_s8_4x8x4_dotprod: 22).
 * Registers: 8 accumulators + A 2 + B 4 + the mask = 15 of the 16 q. */
#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

enum { MR = 4, NR = 8 };

/* Row r's two accumulators (columns 0–3, 4–7) += the two blocks' B (lo, hi: 16·B of columns 0–3, 4–7) times the
 * row's A (lane 0: even block, lane 1: odd). Macros: VSDOT's lane must be a literal before any inlining. */
#define DOT_ROW(c0, c1, ar)                        \
    do {                                           \
        (c0) = vdotq_lane_s32((c0), lo0, (ar), 0); \
        (c1) = vdotq_lane_s32((c1), lo1, (ar), 0); \
        (c0) = vdotq_lane_s32((c0), hi0, (ar), 1); \
        (c1) = vdotq_lane_s32((c1), hi1, (ar), 1); \
    } while (0)

/* The quantized store of columns 4–7: the same 4-column tile store with the column parameters 4 columns on. */
static void store_high_cols(const isf_epilogue *ep, void *c, size_t ldc, int32x4_t r0, int32x4_t r1, int32x4_t r2,
                            int32x4_t r3) {
    isf_epilogue e = *ep; /* the steps not asked for may have NULL pointers: those stay NULL */
    e.bias = ep->bias ? (const int32_t *)ep->bias + 4 : NULL;
    e.col_sum = ep->col_sum ? ep->col_sum + 4 : NULL;
    e.col_scale = ep->col_scale ? ep->col_scale + 4 : NULL;
    e.out_bias = ep->out_bias ? ep->out_bias + 4 : NULL;
    e.partial = ep->partial ? ep->partial + 4 : NULL;
    void *c4 = ep->steps & ISF_EPILOGUE_TO_S8 ? (void *)((int8_t *)c + 4) : (void *)((float *)c + 4);
    isf_qn_store_4cols(&e, c4, ldc, MR, r0, r1, r2, r3);
}

/* int32 C: the old C, then the bias (int32 wrapping; int32 output is never clamped). */
static inline __attribute__((always_inline)) void store_row(int32_t *pc, int32x4_t v0, int32x4_t v1, int accumulate,
                                                            const isf_epilogue *ep) {
    if (accumulate) {
        v0 = vaddq_s32(v0, vld1q_s32(pc));
        v1 = vaddq_s32(v1, vld1q_s32(pc + 4));
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) {
        v0 = vaddq_s32(v0, vld1q_s32(ep->bias));
        v1 = vaddq_s32(v1, vld1q_s32((const int32_t *)ep->bias + 4));
    }
    vst1q_s32(pc, v0);
    vst1q_s32(pc + 4, v1);
}

ISF_UKERNEL(gemm_s4_4x8x4_dotprod) {
    const int32_t *pa = __builtin_assume_aligned(a, 64);
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c10 = c00, c11 = c00;
    int32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    for (size_t n = k_blocks / 2; n != 0; n--) {
        const int32x2x4_t av = vld4_s32(pa);
        const int8x16_t b0 = vld1q_s8(pb), b1 = vld1q_s8(pb + 16);
        const int8x16_t lo0 = vshlq_n_s8(b0, 4), lo1 = vshlq_n_s8(b1, 4);
        const int8x16_t hi0 = vandq_s8(b0, mask), hi1 = vandq_s8(b1, mask);
        DOT_ROW(c00, c01, vreinterpret_s8_s32(av.val[0]));
        DOT_ROW(c10, c11, vreinterpret_s8_s32(av.val[1]));
        DOT_ROW(c20, c21, vreinterpret_s8_s32(av.val[2]));
        DOT_ROW(c30, c31, vreinterpret_s8_s32(av.val[3]));
        pa += 8;
        pb += 32;
    }

    /* the true sums */
    c00 = vshrq_n_s32(c00, 4), c01 = vshrq_n_s32(c01, 4), c10 = vshrq_n_s32(c10, 4), c11 = vshrq_n_s32(c11, 4);
    c20 = vshrq_n_s32(c20, 4), c21 = vshrq_n_s32(c21, 4), c30 = vshrq_n_s32(c30, 4), c31 = vshrq_n_s32(c31, 4);
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) { /* fp32 or int8 C: every step here */
        isf_qn_store_4cols(ep, c, ldc, MR, c00, c10, c20, c30);
        store_high_cols(ep, c, ldc, c01, c11, c21, c31);
        return;
    }
    int32_t *pc = c;
    store_row(pc, c00, c01, accumulate, ep);
    store_row(pc + ldc, c10, c11, accumulate, ep);
    store_row(pc + 2 * ldc, c20, c21, accumulate, ep);
    store_row(pc + 3 * ldc, c30, c31, accumulate, ep);
}
