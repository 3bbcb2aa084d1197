/* bfloat16 -> fp32 GEMM micro-kernel for a few rows (FEAT_BF16): 4x10 tile, bfmmla, 4 k steps per block.
 *
 * The last 2-4 rows of a GEMM (m % 8, or m < 8) in one call on gemm_bf16_8x10x4_bf16's B panels (per block 80 bytes,
 * vector j: columns 2j, 2j+1 × 4 k), so B is streamed once for those rows instead of once per row by
 * gemm_bf16_1x10x4_bf16. A is a 4-row panel: per block 32 bytes, vector p rows 2p, 2p+1 × 4 k: bfmmla's operands as
 * they stand, as in the 8x10x4 kernel (half its A). c<p><j> accumulates the 2x2 block rows 2p, 2p+1 × columns 2j, 2j+1
 * laid out [r0c0 r0c1 r1c0 r1c1]; uzp1/uzp2 on 64-bit lanes rebuild rows after the loop. bfmmla without FEAT_EBF16
 * flushes subnormals and rounds its intermediate sums to odd, as the 8x10x4 kernel's.
 *
 * Hot loop: 2 blocks per iteration: A's 64 bytes (one ld1 of 4 vectors with clang, 2 ldp with GCC) and B's 160 (5 ldp),
 * 20 bfmmla, subs + b.ne and the pointer add: 29 instructions for 320 MACs with clang (0.091 per MAC), 32 with GCC 12
 * (0.10); the 8x10x4 kernel's loop: 0.08. Four rows give 10 accumulators a block, fewer than bfmmla latency × pipes on
 * the widest cores (5-6 × 4 on Neoverse V1/V2, for which the 8x10x4 kernel keeps 20), so even blocks go to c<p><j> and
 * odd ones to d<p><j>: 20 independent chains, added once after the loop. Registers: 20 accumulators + 4 A + 5 B at a
 * time = 29 of 32.
 */
#include <arm_neon.h>

#include "isf_bf16_x10.h"

/* GCC's pre-RA scheduler hoists the 10 B loads of both blocks to the top of the loop: 34 live vectors, 2
 * accumulators spilled (seen with GCC 12 -O2). */
#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC optimize("no-schedule-insns")
#endif

/* Steps p past `n` elements; the empty asm hides the pointer's history, so the compilers post-increment it in the
 * loads rather than keep a second pointer (see gemm_bf16_1x10x4_bf16.c). */
#define NEXT(p, n)             \
    do {                       \
        (p) += (n);            \
        __asm__("" : "+r"(p)); \
    } while (0)

static inline bfloat16x8_t load_bf16(const uint16_t *p) { return vreinterpretq_bf16_u16(vld1q_u16(p)); }

/* Two blocks of A (4 vectors) from p, then p += 32 elements: one ld1 {4 registers} with clang; GCC 12 spills such
 * a tuple to the stack in this loop, so it gets 4 vector loads (2 ldp). */
#if defined(__clang__)
#define LOAD_A(p, a0, a1, a2, a3)                                                                              \
    const uint16x8x4_t a0##a3 = vld1q_u16_x4(p);                                                               \
    const bfloat16x8_t a0 = vreinterpretq_bf16_u16(a0##a3.val[0]), a1 = vreinterpretq_bf16_u16(a0##a3.val[1]); \
    const bfloat16x8_t a2 = vreinterpretq_bf16_u16(a0##a3.val[2]), a3 = vreinterpretq_bf16_u16(a0##a3.val[3]); \
    NEXT(p, 32)
#else
#define LOAD_A(p, a0, a1, a2, a3)                                                            \
    const bfloat16x8_t a0 = load_bf16(p), a1 = load_bf16((p) + 8), a2 = load_bf16((p) + 16); \
    const bfloat16x8_t a3 = load_bf16((p) + 24);                                             \
    NEXT(p, 32)
#endif

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(x) float32x4_t x##0 = vdupq_n_f32(0.0f), x##1 = x##0, x##2 = x##0, x##3 = x##0, x##4 = x##0
/* One block: A's 2 row pairs (a0, a1) against B's 5 column pairs at p, into c<0..1><j> (named x0, x1). */
#define BLOCK(x0, x1, a0, a1, p)                                                                 \
    do {                                                                                         \
        const bfloat16x8_t b0 = load_bf16(p), b1 = load_bf16((p) + 8), b2 = load_bf16((p) + 16); \
        const bfloat16x8_t b3 = load_bf16((p) + 24), b4 = load_bf16((p) + 32);                   \
        x0##0 = vbfmmlaq_f32(x0##0, a0, b0);                                                     \
        x0##1 = vbfmmlaq_f32(x0##1, a0, b1);                                                     \
        x0##2 = vbfmmlaq_f32(x0##2, a0, b2);                                                     \
        x0##3 = vbfmmlaq_f32(x0##3, a0, b3);                                                     \
        x0##4 = vbfmmlaq_f32(x0##4, a0, b4);                                                     \
        x1##0 = vbfmmlaq_f32(x1##0, a1, b0);                                                     \
        x1##1 = vbfmmlaq_f32(x1##1, a1, b1);                                                     \
        x1##2 = vbfmmlaq_f32(x1##2, a1, b2);                                                     \
        x1##3 = vbfmmlaq_f32(x1##3, a1, b3);                                                     \
        x1##4 = vbfmmlaq_f32(x1##4, a1, b4);                                                     \
    } while (0)
#define ACC_ADD(x, y)             \
    x##0 = vaddq_f32(x##0, y##0); \
    x##1 = vaddq_f32(x##1, y##1); \
    x##2 = vaddq_f32(x##2, y##2); \
    x##3 = vaddq_f32(x##3, y##3); \
    x##4 = vaddq_f32(x##4, y##4)

static inline float32x4_t uzp1_64(float32x4_t x, float32x4_t y) {
    return vreinterpretq_f32_u64(vuzp1q_u64(vreinterpretq_u64_f32(x), vreinterpretq_u64_f32(y)));
}
static inline float32x4_t uzp2_64(float32x4_t x, float32x4_t y) {
    return vreinterpretq_f32_u64(vuzp2q_u64(vreinterpretq_u64_f32(x), vreinterpretq_u64_f32(y)));
}
/* Rows 2p and 2p + 1 of the blocks x0..x4 into C. */
#define ROW_PAIR(x, p)                                                                                     \
    isf_x10_store_row(ep, out + 2 * (p) * ldc, accumulate, uzp1_64(x##0, x##1), uzp1_64(x##2, x##3),       \
                      vget_low_f32(x##4));                                                                 \
    isf_x10_store_row(ep, out + (2 * (p) + 1) * ldc, accumulate, uzp2_64(x##0, x##1), uzp2_64(x##2, x##3), \
                      vget_high_f32(x##4))

ISF_UKERNEL(gemm_bf16_4x10x4_bf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    ACC_DECL(c0);
    ACC_DECL(c1);
    ACC_DECL(d0);
    ACC_DECL(d1);

    for (size_t n = k_blocks / 2; n > 0; n--) {
        LOAD_A(pa, a0, a1, a2, a3);
        BLOCK(c0, c1, a0, a1, pb);
        BLOCK(d0, d1, a2, a3, pb + 40);
        NEXT(pb, 80);
    }
    if (k_blocks & 1) {
        BLOCK(c0, c1, load_bf16(pa), load_bf16(pa + 8), pb);
    }
    ACC_ADD(c0, d0);
    ACC_ADD(c1, d1);
    ROW_PAIR(c0, 0);
    ROW_PAIR(c1, 1);
}
