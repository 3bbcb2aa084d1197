/* bfloat16 -> fp32 GEMM row kernel (MR = 1, FEAT_BF16): 1x10 tile, bfdot, 4 k steps per block.
 *
 * The small-M path: the rows gemm_bf16_8x10x4_bf16 would pad (m < 8, the last m % 8 rows; m = 1 for GEMV and LLM
 * decoding) run here on the same B panels (per block 80 bytes, vector j: columns 2j, 2j+1 × 4 k), so each B
 * element is loaded once and used once. A is the row itself, 4 values per block (the caller's row when k is a
 * multiple of 4: never read past it).
 *
 * bfdot rather than the full kernel's bfmmla: with one row, half of a bfmmla's 2x2 result would be wasted; bfdot
 * on B's vector j and A's block duplicated into both halves (one ld1r of 64 bits) makes every lane useful:
 * [c2j(k0,k1) c2j(k2,k3) c2j+1(k0,k1) c2j+1(k2,k3)], reduced pairwise (faddp) once, after the loop. Like bfmmla
 * without FEAT_EBF16, bfdot flushes subnormals and rounds its inner sums to odd.
 *
 * Hot loop: 4 blocks per iteration: 4 ld1r of A, 5 ld1 of 4 B vectors, 20 bfdot, subs + b.ne: 31 instructions
 * for 160 MACs (0.19 per MAC; the 8x10x4 kernel's loop is 0.08, its B vectors serving 8 rows). Accumulators:
 * block s (mod 2) goes to set c<s><0..4>, 10 independent chains, each hit twice per iteration (bfdot latency 4 ×
 * 2 pipes); the two sets are added after the loop. Registers: 10 accumulators + 4 A + B in groups of 4.
 */
#include <arm_neon.h>
#include <string.h>

#include "isf_bf16_x10.h"

/* Steps p past `n` elements. The empty asm hides the pointer's history, so the compilers keep one pointer and
 * post-increment it (ld1 {4 registers}, [x], #64) rather than address each group from a base, which ld1's
 * addressing modes cannot do without an add per group. */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

/* A block of A (4 values, 64 bits) in both halves of a vector: one ld1r. memcpy: the row may be only 2-byte
 * aligned. */
static inline bfloat16x8_t load_a(const uint16_t *p) {
    uint64_t block;
    memcpy(&block, p, sizeof block);
    return vreinterpretq_bf16_u64(vdupq_n_u64(block));
}

#define G(g, i) vreinterpretq_bf16_u16((g).val[i])

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(s) \
    float32x4_t c##s##0 = vdupq_n_f32(0.0f), c##s##1 = c##s##0, c##s##2 = c##s##0, c##s##3 = c##s##0, c##s##4 = c##s##0
#define ACC_DOT(s, x0, x1, x2, x3, x4, av)  \
    c##s##0 = vbfdotq_f32(c##s##0, x0, av); \
    c##s##1 = vbfdotq_f32(c##s##1, x1, av); \
    c##s##2 = vbfdotq_f32(c##s##2, x2, av); \
    c##s##3 = vbfdotq_f32(c##s##3, x3, av); \
    c##s##4 = vbfdotq_f32(c##s##4, x4, av)

/* Four blocks: 20 B vectors in five groups of 4 (block b's vector j is number 5b + j), block b into set b % 2. */
#define FOUR_BLOCKS()                                                     \
    do {                                                                  \
        bfloat16x8_t a0 = load_a(pa);                                     \
        NEXT(pa, 4);                                                      \
        bfloat16x8_t a1 = load_a(pa);                                     \
        NEXT(pa, 4);                                                      \
        bfloat16x8_t a2 = load_a(pa);                                     \
        NEXT(pa, 4);                                                      \
        bfloat16x8_t a3 = load_a(pa);                                     \
        NEXT(pa, 4);                                                      \
        uint16x8x4_t g0 = vld1q_u16_x4(pb);                               \
        NEXT(pb, 32);                                                     \
        uint16x8x4_t g1 = vld1q_u16_x4(pb);                               \
        NEXT(pb, 32);                                                     \
        ACC_DOT(0, G(g0, 0), G(g0, 1), G(g0, 2), G(g0, 3), G(g1, 0), a0); \
        uint16x8x4_t g2 = vld1q_u16_x4(pb);                               \
        NEXT(pb, 32);                                                     \
        ACC_DOT(1, G(g1, 1), G(g1, 2), G(g1, 3), G(g2, 0), G(g2, 1), a1); \
        uint16x8x4_t g3 = vld1q_u16_x4(pb);                               \
        NEXT(pb, 32);                                                     \
        ACC_DOT(0, G(g2, 2), G(g2, 3), G(g3, 0), G(g3, 1), G(g3, 2), a2); \
        uint16x8x4_t g4 = vld1q_u16_x4(pb);                               \
        NEXT(pb, 32);                                                     \
        ACC_DOT(1, G(g3, 3), G(g4, 0), G(g4, 1), G(g4, 2), G(g4, 3), a3); \
    } while (0)

ISF_UKERNEL(gemm_bf16_1x10x4_bf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    (void)ldc; /* one row */
    ACC_DECL(0);
    ACC_DECL(1);

    for (size_t n = k_blocks / 4; n > 0; n--) {
        FOUR_BLOCKS();
    }
    /* Up to 3 blocks left: one at a time, into set 0. */
    for (size_t kb = k_blocks % 4; kb > 0; kb--) {
        bfloat16x8_t av = load_a(pa);
        pa += 4;
        uint16x8x4_t g = vld1q_u16_x4(pb);
        bfloat16x8_t x4 = vreinterpretq_bf16_u16(vld1q_u16(pb + 32));
        pb += 40;
        ACC_DOT(0, G(g, 0), G(g, 1), G(g, 2), G(g, 3), x4, av);
    }

    /* Lanes [c2j(k0,k1) c2j(k2,k3) c2j+1(k0,k1) c2j+1(k2,k3)] of set 0 + set 1, pairwise: the row's 10 sums. */
    float32x4_t x0 = vpaddq_f32(vaddq_f32(c00, c10), vaddq_f32(c01, c11));
    float32x4_t x1 = vpaddq_f32(vaddq_f32(c02, c12), vaddq_f32(c03, c13));
    float32x4_t s4 = vaddq_f32(c04, c14);
    float32x2_t x2 = vpadd_f32(vget_low_f32(s4), vget_high_f32(s4));
    isf_x10_store_row(ep, out, accumulate, x0, x1, x2);
}
