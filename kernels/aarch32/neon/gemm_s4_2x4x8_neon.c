/* int8 × int4 → int32 2×4 tile, KR = 8, without dot-product instructions, on gemm_s8_2x4x8_neon's A panels (per
 * block row 0's 8 bytes, then row 1's) and nibble B panels (isf_internal.h, "int4 B panels"). The k step is
 * isf_s4_x4x8.h's: per pair of blocks (128 MACs) 1 B load (32 bytes, half of gemm_s8_2x4x8_neon's) + 4 A loads +
 * 12 D unpacking instructions + 16 VMULL/VMLAL + 4 VPADAL, where gemm_s8_2x4x8_neon spends 12 loads + 16 VMULL +
 * 16 VPADAL on two blocks. The accumulators are C's rows (no reduction across lanes after the loop).
 * Hot loop at -O3: 44 instructions per 128 MACs with GCC 12 and with clang 19 (gemm_s8_2x4x8_neon: 60, 48); clang
 * hoists every A load of the pair (16 D registers) and spills one Q register inside the loop (a store and a load). */
#include <arm_neon.h>

#include "isf_s4_x4x8.h"
#include "isf_s8_x4x8.h"

ISF_UKERNEL(gemm_s4_2x4x8_neon) {
    /* 16-bit views of the panels: VLD4.16 moves k pairs; its lanes are reinterpreted back to int8. */
    const uint16_t *pa = __builtin_assume_aligned(a, 64);
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    int32x4_t c0 = vdupq_n_s32(0), c1 = c0;

    for (size_t n = k_blocks / 2; n != 0; n--) {
        const isf_s4_x4x8_b bv = isf_s4_x4x8_load_b(pb);
        c0 = isf_s4_x4x8_row(c0, &bv, pa, pa + 8);
        /* no A load of row 1 above this point, so GCC does not spill (all 4 blocks' A, 8 q, with B and 4 product
         * chains); clang hoists them anyway */
        __asm__ volatile("" ::: "memory");
        c1 = isf_s4_x4x8_row(c1, &bv, pa + 4, pa + 12);
        pa += 16;
        pb += 16;
    }

    isf_x4x8_store_2rows(ep, c, ldc, accumulate, c0, c1);
}
