/*
 * bfloat16 -> fp32 GEMM micro-kernel, SVE BFMMLA (vector-length agnostic): 8 rows x 2 vectors, 4 k steps per
 * block, fp32 accumulation. NR = 4 at a 128-bit vector length, VL/32 in general. Panels are bfloat16 bits
 * (uint16_t), loaded as u16 and reinterpreted, which costs nothing.
 */
#include <arm_sve.h>

#include "isf_internal.h"

/*
 * Segment s (128 bits) of an accumulator m<v> is the 2x2 block (rows 2i, 2i+1; columns 2s, 2s+1 of B vector v)
 * laid out [r0c0 r0c1 r1c0 r1c1]: even 64-bit lanes belong to the even row, odd ones to the odd row. uzp1/uzp2 on
 * 64-bit lanes of (m0, m1) put B vector 0's columns, then B vector 1's, in order: one full row each. The old C is
 * added after that, then the epilogue with the tile's bias (one vector: its NR columns) and bounds, loaded once per
 * tile. `steps` is a constant at every call, so each combination of steps is straight-line code. FMAX then FMIN,
 * not FMAXNM/FMINNM: a NaN stays NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row_pair(float *c, size_t ldc, svbool_t pg, svfloat32_t m0,
                                                                 svfloat32_t m1, int accumulate, uint32_t steps,
                                                                 svfloat32_t bias, svfloat32_t lo, svfloat32_t hi) {
    svuint64_t q0 = svreinterpret_u64_f32(m0), q1 = svreinterpret_u64_f32(m1);
    svfloat32_t even = svreinterpret_f32_u64(svuzp1_u64(q0, q1));
    svfloat32_t odd = svreinterpret_f32_u64(svuzp2_u64(q0, q1));
    if (accumulate) {
        even = svadd_f32_x(pg, even, svld1_f32(pg, c));
        odd = svadd_f32_x(pg, odd, svld1_f32(pg, c + ldc));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        even = svadd_f32_x(pg, even, bias);
        odd = svadd_f32_x(pg, odd, bias);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        even = svmin_f32_x(pg, svmax_f32_x(pg, even, lo), hi);
        odd = svmin_f32_x(pg, svmax_f32_x(pg, odd, lo), hi);
    }
    svst1_f32(pg, c, even);
    svst1_f32(pg, c + ldc, odd);
}

/*
 * ld1rq replicates rows 2i, 2i+1 x 4 k (8 bfloat16, a<i>) into every segment; a B vector is VL/16 segments of
 * 2 columns x 4 k, exactly the packed [NR][4] layout. The tile has only 8 accumulators, far fewer than BFMMLA's
 * latency x issue rate (5 x 2 = 10 on Neoverse V1/N2, 6 x 4 = 24 on V2 without accumulator forwarding), so the
 * loop does three k blocks into three independent sets (c, d, e: 24 accumulators), added together after the loop.
 */
#define ACC_DECL(s, i) svfloat32_t s##i##0 = svdup_n_f32(0.0f), s##i##1 = s##i##0
#define ACC_MMLA(s, i)                         \
    s##i##0 = svbfmmla_f32(s##i##0, a##i, b0); \
    s##i##1 = svbfmmla_f32(s##i##1, a##i, b1)
#define LD1RQ(p) svreinterpret_bf16_u16(svld1rq_u16(pg, (p)))
#define LOAD_BLOCK(pa, pb)                                                              \
    a0 = LD1RQ(pa), a1 = LD1RQ((pa) + 8), a2 = LD1RQ((pa) + 16), a3 = LD1RQ((pa) + 24); \
    b0 = svreinterpret_bf16_u16(svld1_u16(pg, (pb)));                                   \
    b1 = svreinterpret_bf16_u16(svld1_vnum_u16(pg, (pb), 1))
#define BLOCK(s, pa, pb) \
    LOAD_BLOCK(pa, pb);  \
    ACC_MMLA(s, 0);      \
    ACC_MMLA(s, 1);      \
    ACC_MMLA(s, 2);      \
    ACC_MMLA(s, 3)
#define ACC_MERGE(i)                                                       \
    c##i##0 = svadd_f32_x(pg, c##i##0, svadd_f32_x(pg, d##i##0, e##i##0)); \
    c##i##1 = svadd_f32_x(pg, c##i##1, svadd_f32_x(pg, d##i##1, e##i##1))
#define ACC_STORE(i, steps, acc) \
    store_row_pair(out + 2 * (i) * ldc, ldc, pg, c##i##0, c##i##1, acc, steps, bias, lo, hi)
/* SVE vectors cannot live in a struct: the epilogue's operands are locals, loaded only for the steps that run. */
#define TILE_STORE(steps, acc)                                                                                    \
    do {                                                                                                          \
        const int has_bias = ((steps) & ISF_EPILOGUE_BIAS) != 0, has_clamp = ((steps) & ISF_EPILOGUE_CLAMP) != 0; \
        const svfloat32_t bias = has_bias ? svld1_f32(pg, ep->bias) : svdup_n_f32(0.0f);                          \
        const svfloat32_t lo = svdup_n_f32(has_clamp ? ep->min : 0.0f);                                           \
        const svfloat32_t hi = svdup_n_f32(has_clamp ? ep->max : 0.0f);                                           \
        ACC_STORE(0, steps, acc);                                                                                 \
        ACC_STORE(1, steps, acc);                                                                                 \
        ACC_STORE(2, steps, acc);                                                                                 \
        ACC_STORE(3, steps, acc);                                                                                 \
    } while (0)

/* The tile's store for the epilogue's `steps` with both steps and `acc` constants, so that each combination is
 * straight-line code (clang tests `accumulate` per row otherwise); bits with no step here (int32 ones) are ignored. */
#define TILE_STORE_STEPS(acc)                                            \
    do {                                                                 \
        if (steps & ISF_EPILOGUE_CLAMP) {                                \
            if (steps & ISF_EPILOGUE_BIAS) {                             \
                TILE_STORE(ISF_EPILOGUE_BIAS | ISF_EPILOGUE_CLAMP, acc); \
            } else {                                                     \
                TILE_STORE(ISF_EPILOGUE_CLAMP, acc);                     \
            }                                                            \
        } else if (steps & ISF_EPILOGUE_BIAS) {                          \
            TILE_STORE(ISF_EPILOGUE_BIAS, acc);                          \
        } else {                                                         \
            TILE_STORE(ISF_EPILOGUE_NONE, acc);                          \
        }                                                                \
    } while (0)

ISF_UKERNEL(gemm_bf16_8x4x4_svebf16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nh = 2 * svcnth();    /* B bfloat16 per block */
    svbfloat16_t a0, a1, a2, a3, b0, b1;
    /* 3 sets x 8 accumulators + 4 A + 2 B = 30 of 32 Z registers; 6 loads per 8 bfmmla. */
    ACC_DECL(c, 0);
    ACC_DECL(c, 1);
    ACC_DECL(c, 2);
    ACC_DECL(c, 3);
    ACC_DECL(d, 0);
    ACC_DECL(d, 1);
    ACC_DECL(d, 2);
    ACC_DECL(d, 3);
    ACC_DECL(e, 0);
    ACC_DECL(e, 1);
    ACC_DECL(e, 2);
    ACC_DECL(e, 3);

    size_t kt = k_blocks / 3;
    for (; kt > 0; kt--) {
        BLOCK(c, pa, pb);
        BLOCK(d, pa + 32, pb + nh);
        BLOCK(e, pa + 64, pb + 2 * nh);
        pa += 96;
        pb += 3 * nh;
    }
    for (size_t kr = k_blocks % 3; kr > 0; kr--) {
        BLOCK(c, pa, pb);
        pa += 32;
        pb += nh;
    }

    ACC_MERGE(0);
    ACC_MERGE(1);
    ACC_MERGE(2);
    ACC_MERGE(3);
    /* Without steps (every k block but a tile's last, and plain GEMMs) this costs a load and a branch, laid out as
     * the fall-through path, where the compilers unswitch `accumulate` themselves as they did before. */
    const uint32_t steps = ep->steps;
    if (__builtin_expect(steps == ISF_EPILOGUE_NONE, 1)) {
        TILE_STORE(ISF_EPILOGUE_NONE, accumulate);
    } else if (accumulate) {
        TILE_STORE_STEPS(1);
    } else {
        TILE_STORE_STEPS(0);
    }
}
