/*
 * fp32 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, fmla by lane, one k step per block
 * (KR = 1). NR = 8 at a 128-bit vector length, 2 x VL/32 in general.
 */
#include <arm_sve.h>

#include "isf_internal.h"

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the epilogue
 * with the tile's bias (bias0, bias1: its two vectors of columns) and bounds, loaded once per tile. `steps` is a
 * constant at every call, so each combination of steps is straight-line code. FMAX then FMIN, not FMAXNM/FMINNM:
 * a NaN stays NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row(float *c, svbool_t pg, svfloat32_t x0, svfloat32_t x1,
                                                            int accumulate, uint32_t steps, svfloat32_t bias0,
                                                            svfloat32_t bias1, svfloat32_t lo, svfloat32_t hi) {
    if (accumulate) {
        x0 = svadd_f32_x(pg, x0, svld1_f32(pg, c));
        x1 = svadd_f32_x(pg, x1, svld1_vnum_f32(pg, c, 1));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        x0 = svadd_f32_x(pg, x0, bias0);
        x1 = svadd_f32_x(pg, x1, bias1);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = svmin_f32_x(pg, svmax_f32_x(pg, x0, lo), hi);
        x1 = svmin_f32_x(pg, svmax_f32_x(pg, x1, lo), hi);
    }
    svst1_f32(pg, c, x0);
    svst1_vnum_f32(pg, c, 1, x1);
}

/*
 * Named registers rather than an array. Row r, columns [0, VL/32) in c<r>0 and [VL/32, 2 VL/32) in c<r>1.
 * ld1rq replicates rows 0..3 (a0) or 4..7 (a1) of one k step into every 128-bit segment, so fmla by lane
 * multiplies a whole B vector by one row's A value whatever the vector length.
 */
#define ACC_DECL(r) svfloat32_t c##r##0 = svdup_n_f32(0.0f), c##r##1 = c##r##0
#define ACC_FMA(r, av, lane)                         \
    c##r##0 = svmla_lane_f32(c##r##0, b0, av, lane); \
    c##r##1 = svmla_lane_f32(c##r##1, b1, av, lane)
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, acc, steps, bias0, bias1, lo, hi)
/* SVE vectors cannot live in a struct: the epilogue's operands are locals, loaded only for the steps that run. */
#define TILE_STORE(steps, acc)                                                                                    \
    do {                                                                                                          \
        const int has_bias = ((steps) & ISF_EPILOGUE_BIAS) != 0, has_clamp = ((steps) & ISF_EPILOGUE_CLAMP) != 0; \
        const svfloat32_t bias0 = has_bias ? svld1_f32(pg, ep->bias) : svdup_n_f32(0.0f);                         \
        const svfloat32_t bias1 = has_bias ? svld1_vnum_f32(pg, ep->bias, 1) : bias0;                             \
        const svfloat32_t lo = svdup_n_f32(has_clamp ? ep->min : 0.0f);                                           \
        const svfloat32_t hi = svdup_n_f32(has_clamp ? ep->max : 0.0f);                                           \
        ACC_STORE(0, steps, acc);                                                                                 \
        ACC_STORE(1, steps, acc);                                                                                 \
        ACC_STORE(2, steps, acc);                                                                                 \
        ACC_STORE(3, steps, acc);                                                                                 \
        ACC_STORE(4, steps, acc);                                                                                 \
        ACC_STORE(5, steps, acc);                                                                                 \
        ACC_STORE(6, steps, acc);                                                                                 \
        ACC_STORE(7, steps, acc);                                                                                 \
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

ISF_UKERNEL(gemm_f32_8x8_sve) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    const svbool_t pg = svptrue_b32(); /* the tile is always full */
    const size_t nr = 2 * svcntw();    /* B floats per block */
    /*
     * 16 accumulators + 2 A + 2 B = 20 of 32 Z registers; 4 loads per 16 fmla; 16 independent chains cover FMLA's
     * latency x issue rate (4 x 4 on Neoverse V2). An 8 x 3-vector tile would fit too (24 + 2 + 3 = 29) and
     * load less per fmla, but this one already keeps the FMA pipes full and it is the name's 8x8.
     */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        svfloat32_t a0 = svld1rq_f32(pg, pa), a1 = svld1rq_f32(pg, pa + 4);
        svfloat32_t b0 = svld1_f32(pg, pb), b1 = svld1_vnum_f32(pg, pb, 1);
        pa += 8;
        pb += nr;
        ACC_FMA(0, a0, 0);
        ACC_FMA(1, a0, 1);
        ACC_FMA(2, a0, 2);
        ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0);
        ACC_FMA(5, a1, 1);
        ACC_FMA(6, a1, 2);
        ACC_FMA(7, a1, 3);
    }

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
