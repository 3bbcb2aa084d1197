/* binary16 GEMM micro-kernel for a few rows (FEAT_FP16): 4x16 tile, fmla .8h by element, fp16 accumulation, one k step
 * per block.
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call on gemm_f16_8x16_fp16's B panels (16 halves per k step), so
 * B is streamed once for those rows instead of once per row by gemm_f16_1x16_fp16. A is a 4-row panel (per k step the 4
 * rows' halves), so 8 halves of A are two k steps: even steps go to accumulator sets c0-c3 (A's elements 0-3), odd ones
 * to c4-c7 (elements 4-7), 16 independent chains as in the 8x16 kernel (fmla latency 4 × 4 pipes on Neoverse V1/V2
 * needs 16), added in binary16 once after the loop. The k step's two spellings and the store are the 8-row kernels',
 * from isf_f16_x24.h (2 vectors a row), as gemm_f16_4x24_fp16's are. AArch32's kernel of this name is a full kernel of
 * its own (kernels/aarch32).
 *
 * Hot loop: 4 k steps per iteration: clang: one ldp of A (two pairs of steps' 4 rows), 4 ldp of B (8 vectors), 32 fmla
 * by element, subs + b.ne and one pointer add: 40 instructions for 256 MACs (0.16 per MAC); GCC 12: 16 ldr h of A
 * instead of the ldp, 55 (0.21); gemm_f16_4x24_fp16: 31 / 39 for 192. Registers: 16 accumulators + A + 4 B.
 */
#define ISF_F16_VECS 2
#define ISF_TILE_MR 4
#include "isf_f16_x24.h"

/* One k step: B's 2 vectors at p against A's elements s0..s3, into sets s0..s3. */
#define STEP(s0, s1, s2, s3, p)                                     \
    do {                                                            \
        const float16x8_t b0 = load_f16(p), b1 = load_f16((p) + 8); \
        ACC_FMA(s0);                                                \
        ACC_FMA(s1);                                                \
        ACC_FMA(s2);                                                \
        ACC_FMA(s3);                                                \
    } while (0)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_f16(c##s##0, c##t##0); \
    c##s##1 = vaddq_f16(c##s##1, c##t##1)
#define TILE_ROWS(steps, acc) ISF_ROW_STORES_4(ACC_STORE, steps, acc)

ISF_UKERNEL(gemm_f16_4x16_fp16) {
    const uint16_t *ap = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    /* Each pair of steps reads its 8 halves of A below `pa`, a pointer of its own block; the iteration advances one
     * pointer once and addresses both pairs from it at offsets -16..-1 (at offset 0 GCC picks ld1r, a vector-pipe
     * slot: gemm_f16_8x24_fp16.c). */
    for (size_t n = k_blocks / 4; n > 0; n--) {
        ap += 16;
        {
            const uint16_t *const pa = ap - 8;
            A_LOAD();
            STEP(0, 1, 2, 3, pb);
            STEP(4, 5, 6, 7, pb + 16);
        }
        {
            const uint16_t *const pa = ap;
            A_LOAD();
            STEP(0, 1, 2, 3, pb + 32);
            STEP(4, 5, 6, 7, pb + 48);
        }
        pb += 64;
    }
    if (k_blocks & 2) {
        const uint16_t *const pa = ap + 8;
        A_LOAD();
        STEP(0, 1, 2, 3, pb);
        STEP(4, 5, 6, 7, pb + 16);
        ap += 8;
        pb += 32;
    }
    if (k_blocks & 1) { /* the last step's 4 halves only: nothing past the panel is read */
        const uint16_t *const pa = ap + 8;
#if ISF_A_PER_ELEMENT
        STEP(0, 1, 2, 3, pb);
#else
        const float16x8_t a0 = vcombine_f16(vreinterpret_f16_u16(vld1_u16(pa - 8)), vdup_n_f16(0.0f));
        STEP(0, 1, 2, 3, pb);
#endif
    }
    /* The two sets' sums in binary16: each is a sum of fp16 products rounded step by step, as the 8x16 kernel's. */
    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);

    TILE_FINISH();
}
