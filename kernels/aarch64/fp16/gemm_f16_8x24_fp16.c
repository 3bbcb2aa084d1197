/* binary16 GEMM micro-kernel (FEAT_FP16): 8x24 tile, fmla .8h by element, fp16 accumulation, one k step per block. */
#define ISF_TILE_MR 8
#include "isf_f16_x24.h"

/*
 * Tile: 24 accumulators of 8 halves (row r, columns 8j..8j+7 in c<r><j>) + 1 A + 3 B vectors = 28 of 32
 * registers, 24 fmla per k step. 24 independent accumulators also cover fmla latency × issue width on the
 * widest cores (4 cycles × 4 pipes on Neoverse V1/V2). fmla by element on halves takes its indexed register
 * from v0-v15 only; only the A operand is indexed, so the compilers have room to place it.
 *
 * Two spellings of the same instruction stream:
 *  - clang turns vfmaq_laneq_f16 on the loaded A vector into `fmla vD.8h, vB.8h, vA.h[r]`: 4 loads per step.
 *  - GCC 12 has no by-element pattern for .8h fmla with a lane other than 0: vfmaq_laneq_f16 becomes a dup per
 *    row plus a vector fmla (8 extra vector ops per step, and spills). It does use `fmla ..., vS.h[0]` for a
 *    scalar already in a register, so there each A value is loaded as a scalar (ldr h, no vector-pipe work)
 *    right before its 3 fmla. The loads are addressed below the advanced pointer (offsets -16..-2) because at
 *    offset 0 GCC picks ld1r, which takes a vector-pipe slot. GCC's pre-RA scheduler would hoist the 8 scalar
 *    loads to the top of the loop (8 more live registers, all in v0-v15: spills), hence no-schedule-insns.
 */
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_8(ACC_STORE, steps, acc)

ISF_UKERNEL(gemm_f16_8x24_fp16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        float16x8_t b0 = load_f16(pb), b1 = load_f16(pb + 8), b2 = load_f16(pb + 16);
        pa += 8; /* A of this step is pa[-8..-1] */
        pb += 24;
        A_LOAD();
        ACC_FMA(0);
        ACC_FMA(1);
        ACC_FMA(2);
        ACC_FMA(3);
        ACC_FMA(4);
        ACC_FMA(5);
        ACC_FMA(6);
        ACC_FMA(7);
    }

    TILE_FINISH();
}
