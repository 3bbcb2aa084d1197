/* binary16 GEMM micro-kernel (FEAT_FP16): 8x16 tile, fmla .8h by element, fp16 accumulation, one k step per block.
 *
 * gemm_f16_8x24_fp16's column sibling for n that 24 columns pad: n = 64 is 72 columns of 24 and 128 is 144 (12.5 % of
 * the MACs on padding); 16 columns pad none of the powers of two from 16 on. Same A panels (8 rows of halves per k
 * step), B panels of 16 halves per k step; the k step's two spellings (A by lane with clang, element by element with
 * GCC: gemm_f16_8x24_fp16.c says why) and the store are the 24-column kernels' (isf_f16_x24.h, 2 vectors a row).
 *
 * Hot loop: 2 k steps per iteration: clang: one ldp of A (both steps' 8 halves), 2 ldp of B, 32 fmla by element, subs +
 * b.ne and one pointer add: 38 instructions for 256 MACs (0.15 per MAC; the 8x24 kernel's loop: 30 for 192, 0.16); GCC
 * 12: 16 ldr h of A instead of the ldp, 53 (0.21). Registers: 16 accumulators (16 independent chains: fmla latency 4 ×
 * 4 pipes on Neoverse V1/V2) + A + 2 B vectors per step, the indexed A in v0-v15 as the compilers place it.
 */
#define ISF_F16_VECS 2
#define ISF_TILE_MR 8
#include "isf_f16_x24.h"

/* One k step: B's 2 vectors at pb against A's 8 elements at `at` - 8 (the header's ACC_FMA and A_LOAD read them
 * below `pa`, this block's own pointer). Both steps of an iteration address A from one pointer advanced once, at
 * offsets -16..-1: at offset 0 GCC would pick ld1r, a vector-pipe slot (gemm_f16_8x24_fp16.c). */
#define STEP(at)                                                    \
    do {                                                            \
        const uint16_t *const pa = (at);                            \
        const float16x8_t b0 = load_f16(pb), b1 = load_f16(pb + 8); \
        pb += 16;                                                   \
        A_LOAD();                                                   \
        ACC_FMA(0);                                                 \
        ACC_FMA(1);                                                 \
        ACC_FMA(2);                                                 \
        ACC_FMA(3);                                                 \
        ACC_FMA(4);                                                 \
        ACC_FMA(5);                                                 \
        ACC_FMA(6);                                                 \
        ACC_FMA(7);                                                 \
    } while (0)
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_8(ACC_STORE, steps, acc)

ISF_UKERNEL(gemm_f16_8x16_fp16) {
    const uint16_t *ap = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    for (size_t n = k_blocks / 2; n > 0; n--) {
        ap += 16;
        STEP(ap - 8);
        STEP(ap);
    }
    if (k_blocks & 1) {
        STEP(ap + 8);
    }

    TILE_FINISH();
}
