/* int8 × int4 -> int32 GEMM micro-kernel, A32: 4x8 tile, VSMMLA, 8 k steps per block, on int4 B panels
 * (gemm_s8_4x8x8_i8mm's panels with their blocks in nibble pairs).
 *
 * Operands as gemm_s8_4x8x8_i8mm's: per block A is 32 bytes (vector i: rows 2i, 2i+1 × 8 k), B 64 bytes (vector
 * j: columns 2j, 2j+1 × 8 k), and c<i><j> accumulates the 2x2 block rows 2i, 2i+1 × columns 2j, 2j+1 laid out
 * [r0c0 r0c1 r1c0 r1c1] (low D: row 2i, high D: row 2i+1). A nibble panel's 64 bytes of pair t hold both blocks'
 * B: VSHL #4 gives block 2t's weights × 16, VAND #0xF0 block 2t+1's, each VSMMLA's operand as it stands; the sums
 * are 16 times the true ones (|16·w| ≤ 128: the int8 bound holds), shifted back exactly (VSHR #4) before C, the
 * bias or the quantized steps.
 *
 * In C rather than assembly: per pair (512 MACs) both blocks' A (4 vectors) stay loaded while each B vector is
 * loaded once and unpacked in place: 8 accumulators + 4 A + the mask + B and its unpacked copy = 15 of the 16 q,
 * no room for the .S kernel's double-buffered A. Per pair: 4 A + 4 B loads, 4 VSHL + 4 VAND, 16 VSMMLA: GCC 12
 * gives 42 instructions (7 pointer moves, no spill); clang 19 42 too but with 2 vectors spilled and reloaded and
 * the mask rematerialized (its scheduler unpacks ahead whatever the source order: reloading B per block, or
 * empty asm fences, made it worse).
 */
#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* Column pair j: B vector g unpacked to block 2t (against A x0, x1) and block 2t+1 (against y0, y1). */
#define COLUMN(j, g)                              \
    do {                                          \
        const int8x16_t g_ = (g);                 \
        const int8x16_t hi_ = vandq_s8(g_, mask); \
        const int8x16_t lo_ = vshlq_n_s8(g_, 4);  \
        c0##j = vmmlaq_s32(c0##j, x0, lo_);       \
        c1##j = vmmlaq_s32(c1##j, x1, lo_);       \
        c0##j = vmmlaq_s32(c0##j, y0, hi_);       \
        c1##j = vmmlaq_s32(c1##j, y1, hi_);       \
    } while (0)

/* 4 columns of the even (odd = 0) or odd row of two blocks (ca, cb) of a row pair: their low or high D halves. */
static inline int32x4_t row_half(int32x4_t ca, int32x4_t cb, int odd) {
    return odd ? vcombine_s32(vget_high_s32(ca), vget_high_s32(cb)) : vcombine_s32(vget_low_s32(ca), vget_low_s32(cb));
}

/* The tile's 4 rows of true sums, columns 0-3 in r[2i], 4-7 in r[2i + 1], through the quantized steps into C.
 * Not inlined: it leaves the hot loop's register allocation alone. */
static __attribute__((noinline)) void store_quantized(const isf_epilogue *ep, void *c, size_t ldc,
                                                      const int32x4_t r[8]) {
    const isf_qn_cols c0 = isf_qn_cols_load(ep, 0), c1 = isf_qn_cols_load(ep, 4);
    if (ep->steps & ISF_EPILOGUE_TO_S8) {
        const isf_qn_s8 o = isf_qn_s8_load(ep);
        for (size_t i = 0; i < 4; i++) {
            const isf_qn_row rw = isf_qn_row_load(ep, i);
            const int32x4_t lo = isf_qn_sums(ep, &c0, rw, i, 0, r[2 * i]);
            const int32x4_t hi = isf_qn_sums(ep, &c1, rw, i, 4, r[2 * i + 1]);
            vst1_s8((int8_t *)c + i * ldc,
                    isf_qn_s8_narrow8(&o, isf_qn_s8_wide(&o, &c0, lo), isf_qn_s8_wide(&o, &c1, hi)));
        }
        return;
    }
    const isf_qn_clamp o = isf_qn_clamp_load(ep);
    for (size_t i = 0; i < 4; i++) {
        const isf_qn_row rw = isf_qn_row_load(ep, i);
        float *out = (float *)c + i * ldc;
        vst1q_f32(out, isf_qn_f32(&o, &c0, rw, isf_qn_sums(ep, &c0, rw, i, 0, r[2 * i])));
        vst1q_f32(out + 4, isf_qn_f32(&o, &c1, rw, isf_qn_sums(ep, &c1, rw, i, 4, r[2 * i + 1])));
    }
}

ISF_UKERNEL(gemm_s4_4x8x8_i8mm) {
    const int8_t *pa = __builtin_assume_aligned(a, 64);
    const int8_t *pb = __builtin_assume_aligned(b, 64);
    const int8x16_t mask = vdupq_n_s8((int8_t)0xF0);
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;

    for (size_t n = k_blocks / 2; n != 0; n--) {                        /* k_blocks is even */
        const int8x16_t x0 = vld1q_s8(pa), x1 = vld1q_s8(pa + 16);      /* block 2t */
        const int8x16_t y0 = vld1q_s8(pa + 32), y1 = vld1q_s8(pa + 48); /* block 2t+1 */
        COLUMN(0, vld1q_s8(pb));
        COLUMN(1, vld1q_s8(pb + 16));
        COLUMN(2, vld1q_s8(pb + 32));
        COLUMN(3, vld1q_s8(pb + 48));
        pa += 64;
        pb += 64;
    }

    int32x4_t r[8];
    c00 = vshrq_n_s32(c00, 4), c01 = vshrq_n_s32(c01, 4), c02 = vshrq_n_s32(c02, 4), c03 = vshrq_n_s32(c03, 4);
    c10 = vshrq_n_s32(c10, 4), c11 = vshrq_n_s32(c11, 4), c12 = vshrq_n_s32(c12, 4), c13 = vshrq_n_s32(c13, 4);
    for (int odd = 0; odd < 2; odd++) {
        r[2 * odd] = row_half(c00, c01, odd); /* row odd: rows 0, 1 from c0<j> */
        r[2 * odd + 1] = row_half(c02, c03, odd);
        r[4 + 2 * odd] = row_half(c10, c11, odd); /* rows 2, 3 from c1<j> */
        r[4 + 2 * odd + 1] = row_half(c12, c13, odd);
    }
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        store_quantized(ep, c, ldc, r);
        return;
    }
    /* int32 C: accumulate, then BIAS (wrapping, as vector adds do); the driver never asks for CLAMP. */
    const int32x4_t b0 = ep->steps & ISF_EPILOGUE_BIAS ? vld1q_s32(ep->bias) : z;
    const int32x4_t b1 = ep->steps & ISF_EPILOGUE_BIAS ? vld1q_s32((const int32_t *)ep->bias + 4) : z;
    for (size_t i = 0; i < 4; i++) {
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
