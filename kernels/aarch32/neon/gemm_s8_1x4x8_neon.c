/* int8 → int32 1×4 row kernel, KR = 8, without dot-product instructions: one row of C from gemm_s8_2x4x8_neon's B
 * panels, for the last row of an odd m (and m = 1). VMULL.S8 gives 8 exact int16 products, VPADAL.S16 adds them
 * pairwise into int32 lanes; two int8 products are never summed in int16 ((−128)·(−128) twice overflows it).
 *
 * A block of B is 4 columns × 8 k bytes. VLD4.16 loads it in one instruction and deinterleaves its 16-bit pairs:
 * register j holds k pair j (k 2j, 2j+1) of columns 0, 1, 2, 3, so one VMULL with A's pair j broadcast (VLD4.16
 * {d[],d[],d[],d[]}: the whole A block, 8 bytes, in one load) and one VPADAL add 8 products straight into the
 * lanes of columns 0–3: 2 loads + 4 VMULL + 4 VPADAL per block of 32 MACs, no reduction across lanes at the end,
 * only across the 4 accumulators (one per k pair: 4 independent VPADAL chains, each fed once per block). Two blocks
 * per iteration halve the loop's own instructions.
 * Hot loop at -O3: GCC 12 26 instructions, clang 19 22 per 64 MACs (gemm_s8_2x4x8_neon: 30, 24).
 * A is the caller's row (any byte alignment: VLD4 here carries no alignment hint), k_blocks × 8 bytes, never
 * read past. Registers: 4 accumulators + B 2 + A 2 + 4 products = 12 of the 16 q. */
#include <arm_neon.h>

#include "isf_s8_x4x8.h"

static inline int8x8_t s8(uint16x4_t v) { return vreinterpret_s8_u16(v); }

/* One block into the 4 accumulators: acc[j] += columns 0–3 · A's k pair j. */
static inline void block(int32x4_t acc[4], const uint16_t *pa, const uint16_t *pb) {
    const uint16x4x4_t av = vld4_dup_u16(pa);
    const uint16x4x4_t bv = vld4_u16(pb);
    acc[0] = vpadalq_s16(acc[0], vmull_s8(s8(bv.val[0]), s8(av.val[0])));
    acc[1] = vpadalq_s16(acc[1], vmull_s8(s8(bv.val[1]), s8(av.val[1])));
    acc[2] = vpadalq_s16(acc[2], vmull_s8(s8(bv.val[2]), s8(av.val[2])));
    acc[3] = vpadalq_s16(acc[3], vmull_s8(s8(bv.val[3]), s8(av.val[3])));
}

ISF_UKERNEL(gemm_s8_1x4x8_neon) {
    /* 16-bit views of the int8 panels: VLD4.16 moves k pairs; its lanes are reinterpreted back to int8. */
    const uint16_t *pa = a;
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};

    for (size_t n = k_blocks / 2; n != 0; n--) {
        block(acc, pa, pb);
        block(acc, pa + 4, pb + 16);
        pa += 8;
        pb += 32;
    }
    if (k_blocks % 2) {
        block(acc, pa, pb);
    }

    (void)ldc; /* one row */
    isf_x4x8_store_1row(ep, c, accumulate, vaddq_s32(vaddq_s32(acc[0], acc[1]), vaddq_s32(acc[2], acc[3])));
}
