/*
 * fp16 GEMM micro-kernel, SVE (vector-length agnostic): 8 rows x 2 vectors, fmla .h by lane, one k step per block
 * (KR = 1), accumulation in binary16. NR = 16 at a 128-bit vector length, 2 x VL/16 in general.
 * Panels and C are binary16 bits (uint16_t); they are loaded as u16 and reinterpreted, which costs nothing.
 */
#include <arm_sve.h>

#include "isf_internal.h"

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the epilogue
 * in binary16 like the accumulation, with the tile's bias (bias0, bias1: its two vectors of columns) and bounds,
 * loaded once per tile. `steps` is a constant at every call, so each combination of steps is straight-line code.
 * FMAX then FMIN, not FMAXNM/FMINNM: a NaN stays NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row(uint16_t *c, svbool_t pg, svfloat16_t x0, svfloat16_t x1,
                                                            int accumulate, uint32_t steps, svfloat16_t bias0,
                                                            svfloat16_t bias1, svfloat16_t lo, svfloat16_t hi) {
    if (accumulate) {
        x0 = svadd_f16_x(pg, x0, svreinterpret_f16_u16(svld1_u16(pg, c)));
        x1 = svadd_f16_x(pg, x1, svreinterpret_f16_u16(svld1_vnum_u16(pg, c, 1)));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        x0 = svadd_f16_x(pg, x0, bias0);
        x1 = svadd_f16_x(pg, x1, bias1);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = svmin_f16_x(pg, svmax_f16_x(pg, x0, lo), hi);
        x1 = svmin_f16_x(pg, svmax_f16_x(pg, x1, lo), hi);
    }
    svst1_u16(pg, c, svreinterpret_u16_f16(x0));
    svst1_vnum_u16(pg, c, 1, svreinterpret_u16_f16(x1));
}

/*
 * Named registers rather than an array. Row r, columns [0, VL/16) in c<r>0 and [VL/16, 2 VL/16) in c<r>1.
 * One ld1rq replicates the 8 rows' A values of one k step into every 128-bit segment; lane r selects row r.
 */
#define ACC_DECL(r) svfloat16_t c##r##0 = svdup_n_f16(0.0), c##r##1 = c##r##0
#define ACC_FMA(r)                                \
    c##r##0 = svmla_lane_f16(c##r##0, b0, a0, r); \
    c##r##1 = svmla_lane_f16(c##r##1, b1, a0, r)
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, acc, steps, bias0, bias1, lo, hi)
/* SVE vectors cannot live in a struct: the epilogue's operands are locals, loaded only for the steps that run. */
#define F16_DUP(bits) svreinterpret_f16_u16(svdup_n_u16(bits))
#define F16_LOAD(p, vnum) svreinterpret_f16_u16(svld1_vnum_u16(pg, (const uint16_t *)(p), vnum))
#define TILE_STORE(steps, acc)                                                                                    \
    do {                                                                                                          \
        const int has_bias = ((steps) & ISF_EPILOGUE_BIAS) != 0, has_clamp = ((steps) & ISF_EPILOGUE_CLAMP) != 0; \
        const svfloat16_t bias0 = has_bias ? F16_LOAD(ep->bias, 0) : F16_DUP(0);                                  \
        const svfloat16_t bias1 = has_bias ? F16_LOAD(ep->bias, 1) : bias0;                                       \
        const svfloat16_t lo = F16_DUP(has_clamp ? ep->min_f16 : 0);                                              \
        const svfloat16_t hi = F16_DUP(has_clamp ? ep->max_f16 : 0);                                              \
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

ISF_UKERNEL(gemm_f16_8x16_sve) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    const svbool_t pg = svptrue_b16(); /* the tile is always full */
    const size_t nr = 2 * svcnth();    /* B halves per block */
    /* 16 accumulators + 1 A + 2 B = 19 of 32 Z registers; 3 loads per 16 fmla. */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        svfloat16_t a0 = svreinterpret_f16_u16(svld1rq_u16(pg, pa));
        svfloat16_t b0 = svreinterpret_f16_u16(svld1_u16(pg, pb));
        svfloat16_t b1 = svreinterpret_f16_u16(svld1_vnum_u16(pg, pb, 1));
        pa += 8;
        pb += nr;
        ACC_FMA(0);
        ACC_FMA(1);
        ACC_FMA(2);
        ACC_FMA(3);
        ACC_FMA(4);
        ACC_FMA(5);
        ACC_FMA(6);
        ACC_FMA(7);
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
