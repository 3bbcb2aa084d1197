/* binary16 GEMM row kernel (MR = 1, FEAT_FP16): 1x16 tile, fmla .8h by element, fp16 accumulation, KR = 1.
 *
 * The small-M path of gemm_f16_8x16_fp16: the rows it would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (16 halves per k step), so each B element is loaded once and used once. A is
 * the row itself, k_blocks contiguous halves (the driver may pass the caller's row: never read past it). AArch32's
 * kernel of this name is a separate file (kernels/aarch32/neon).
 *
 * Hot loop: 8 k steps per iteration, k step s into set c<s><0..1> by A's element s of the 8 at pa - 8 (the 8-row
 * kernels' ACC_FMA, from isf_f16_x24.h, with its two spellings: by lane on one ldr q of A with clang, a scalar ldr h
 * per step with GCC): 4 ld1 of 4 B vectors (2 k steps each), 16 fmla, subs + b.ne: 23 instructions for 128 MACs with
 * clang (0.18 per MAC; gemm_f16_1x24_fp16: 0.17), 30 with GCC 12 (0.23). With one row every fmla needs its own B
 * vector, so B loads set the bound. 16 independent chains, each hit once per iteration (fmla latency 4 × 4 pipes on
 * Neoverse V1); the eight partial sums of each column are added in binary16 after the loop. Registers: 16 accumulators
 * + A + 2 groups of 4 B = 25 of 32. The store and its epilogue are the 8-row kernel's (one row).
 */
#define ISF_F16_VECS 2
#define ISF_TILE_MR 1
#include "isf_f16_x24.h"

/* Steps p past `n` elements of B. The empty asm hides the pointer's history, so the compilers keep one pointer
 * and post-increment it (ld1 {registers}, [x], #bytes) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)
#define G(g, i) vreinterpretq_f16_u16((g).val[i])
/* Two k steps (4 B vectors, one ld1 of 4): steps s and t of the 8 into sets s and t. */
#define TWO_STEPS(s, t)                                   \
    do {                                                  \
        const uint16x8x4_t g = vld1q_u16_x4(pb);          \
        NEXT(pb, 32);                                     \
        {                                                 \
            const float16x8_t b0 = G(g, 0), b1 = G(g, 1); \
            ACC_FMA(s);                                   \
        }                                                 \
        {                                                 \
            const float16x8_t b0 = G(g, 2), b1 = G(g, 3); \
            ACC_FMA(t);                                   \
        }                                                 \
    } while (0)
#define ACC_FOLD(s, t)                     \
    c##s##0 = vaddq_f16(c##s##0, c##t##0); \
    c##s##1 = vaddq_f16(c##s##1, c##t##1)
#define TILE_ROWS(steps, acc) ACC_STORE(0, steps, acc)

ISF_UKERNEL(gemm_f16_1x16_fp16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const acc_start start = start_of(ep);
    ISF_REPEAT_8(ACC_DECL);

    for (size_t n = k_blocks / 8; n > 0; n--) {
        pa += 8; /* A of these 8 steps is pa[-8..-1] */
        A_LOAD();
        TWO_STEPS(0, 1);
        TWO_STEPS(2, 3);
        TWO_STEPS(4, 5);
        TWO_STEPS(6, 7);
    }
    /* Up to 7 steps left: one at a time, A broadcast, into set 0. */
    for (size_t kb = k_blocks % 8; kb > 0; kb--) {
        const float16x8_t as = vreinterpretq_f16_u16(vld1q_dup_u16(pa));
        pa++;
        c00 = vfmaq_f16(c00, load_f16(pb), as);
        c01 = vfmaq_f16(c01, load_f16(pb + 8), as);
        pb += 16;
    }

    ACC_FOLD(0, 4);
    ACC_FOLD(1, 5);
    ACC_FOLD(2, 6);
    ACC_FOLD(3, 7);
    ACC_FOLD(0, 2);
    ACC_FOLD(1, 3);
    ACC_FOLD(0, 1);

    TILE_FINISH();
}
