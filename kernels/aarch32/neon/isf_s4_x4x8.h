/* The k step of gemm_s4_2x4x8_neon and gemm_s4_1x4x8_neon (int4 B panels: isf_internal.h, "int4 B panels"): one
 * pair of blocks of B, 4 columns × 8 k bytes, each byte the even block's weight in its low nibble and the odd
 * block's in its high one.
 *
 * VLD4.16 deinterleaves B's 16-bit k pairs as gemm_s8_1x4x8_neon does: register j holds k pair j (k 2j, 2j+1) of
 * columns 0–3, so VMULL by A's pair j broadcast (VLD4.16 {d[]…}) puts the two products of a column in adjacent
 * int16 lanes, which VPADAL adds into that column's int32 lane: the accumulators are C's columns in order.
 * The nibbles become their exact int8 values (−8…7): VSHL #4 then VSHR.S8 #4 for the low one, VSHR.S8 #4 for the
 * high one (3 D instructions per 8 bytes). An int8 × int4 product is at most 1024 in magnitude, so the 4 k pairs of
 * a block add up in int16 (VMULL then 3 VMLAL: 4 products a lane, |sum| ≤ 4096) before ONE VPADAL: per
 * block and row 1 A load + 4 VMULL/VMLAL + 1 VPADAL, where int8 weights need 4 VMULL + 4 VPADAL. Even and odd blocks
 * keep separate int16 chains (4 deep), so consecutive multiply-accumulates do not all wait on each other. */
#ifndef ISAFORGE_S4_X4X8_H
#define ISAFORGE_S4_X4X8_H

#include <arm_neon.h>

/* A pair of B's blocks as exact int8: lo = the even block, hi = the odd; [j] = k pair j of columns 0–3. */
typedef struct {
    int8x8_t lo[4], hi[4];
} isf_s4_x4x8_b;

static inline int8x8_t isf_s4_x4x8_s8(uint16x4_t v) { return vreinterpret_s8_u16(v); }

/* Unpacked on D registers: joining VLD4.16's D registers into Q ones costs the compilers register copies, and on
 * the 64-bit NEON of the in-order cores a Q instruction takes two D ones' time anyway. */
static inline __attribute__((always_inline)) isf_s4_x4x8_b isf_s4_x4x8_load_b(const uint16_t *pb) {
    const uint16x4x4_t bv = vld4_u16(pb);
    isf_s4_x4x8_b r;
    for (int j = 0; j < 4; j++) {
        const int8x8_t v = isf_s4_x4x8_s8(bv.val[j]);
        r.lo[j] = vshr_n_s8(vshl_n_s8(v, 4), 4);
        r.hi[j] = vshr_n_s8(v, 4);
    }
    return r;
}

/* One block (b: its 4 k pairs) times one row's 8 A bytes of that block, as int16 pair products. */
static inline __attribute__((always_inline)) int16x8_t isf_s4_x4x8_block(const int8x8_t b[4], const uint16_t *pa) {
    const uint16x4x4_t av = vld4_dup_u16(pa);
    int16x8_t p = vmull_s8(b[0], isf_s4_x4x8_s8(av.val[0]));
    p = vmlal_s8(p, b[1], isf_s4_x4x8_s8(av.val[1]));
    p = vmlal_s8(p, b[2], isf_s4_x4x8_s8(av.val[2]));
    return vmlal_s8(p, b[3], isf_s4_x4x8_s8(av.val[3]));
}

/* acc (a row's columns 0–3) += the pair's products with the row's even-block A at pa_even, odd-block at pa_odd. */
static inline __attribute__((always_inline)) int32x4_t isf_s4_x4x8_row(int32x4_t acc, const isf_s4_x4x8_b *b,
                                                                       const uint16_t *pa_even,
                                                                       const uint16_t *pa_odd) {
    acc = vpadalq_s16(acc, isf_s4_x4x8_block(b->lo, pa_even));
    return vpadalq_s16(acc, isf_s4_x4x8_block(b->hi, pa_odd));
}

#endif
