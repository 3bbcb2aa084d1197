/* int8 × int4 → int32 1×4 row kernel, KR = 8, without dot-product instructions: one row of C from
 * gemm_s4_2x4x8_neon's nibble B panels, for the last row of an odd m and for m = 1 (LLM decoding, where B's bytes
 * are the cost). The k step is isf_s4_x4x8.h's: per pair of blocks (64 MACs) 1 B load (32 bytes, half of
 * gemm_s8_1x4x8_neon's) + 2 A loads + 12 D unpacking instructions + 8 VMULL/VMLAL + 2 VPADAL.
 * Hot loop at -O3: 29 instructions per 64 MACs with GCC 12, 27 with clang 19 (gemm_s8_1x4x8_neon: 26, 22), most of
 * them D-wide (the unpacking, VMULL/VMLAL) where gemm_s8's VPADALs are Q-wide, on half the B bytes.
 * A is the caller's row (any byte alignment: VLD4 here carries no alignment hint), k_blocks × 8 bytes, never read
 * past; k_blocks is even (pairs). */
#include <arm_neon.h>

#include "isf_s4_x4x8.h"
#include "isf_s8_x4x8.h"

ISF_UKERNEL(gemm_s4_1x4x8_neon) {
    /* 16-bit views of the panels: VLD4.16 moves k pairs; its lanes are reinterpreted back to int8. */
    const uint16_t *pa = a;
    const uint16_t *pb = __builtin_assume_aligned(b, 64);
    int32x4_t acc = vdupq_n_s32(0);

    for (size_t n = k_blocks / 2; n != 0; n--) {
        const isf_s4_x4x8_b bv = isf_s4_x4x8_load_b(pb);
        acc = isf_s4_x4x8_row(acc, &bv, pa, pa + 4);
        pa += 8;
        pb += 16;
    }

    (void)ldc; /* one row */
    isf_x4x8_store_1row(ep, c, accumulate, acc);
}
