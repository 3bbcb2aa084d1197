/*
 * The sums' start (the bias) and the store with the clamp shared by gemm_f32_8x8_sve and gemm_f32_4x8_sve: rows of 2
 * vectors, row r's sums in c<r>0 (columns [0, VL/32)) and c<r>1 (the next VL/32). Each kernel owns its k loop and
 * defines ISF_TILE_ROWS(steps, acc) as ACC_STORE of each of its rows; TILE_FINISH() stores them. Include only from
 * files compiled with SVE flags.
 */
#ifndef ISAFORGE_F32_SVE_H
#define ISAFORGE_F32_SVE_H

#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

/*
 * Where the tile's sums start (SVE vectors cannot live in a struct: locals start0, start1 and zero): its bias when
 * its steps add one, else zero. The bias is one more term of each sum, added first rather than last (the same error
 * bound, gemmjob.error_bound: any order), which spares the store a vector addition per accumulator. The kernel
 * writes ACC_STARTS(); after its `pg` and starts its first set of rows' accumulators at start0 / start1, any further
 * set (the sums of other k steps, folded into the first after the loop) at zero.
 */
#define ACC_STARTS()                              \
    const svfloat32_t zero = svdup_n_f32(0.0f);   \
    svfloat32_t start0 = zero, start1 = zero;     \
    if (ep->steps & ISF_EPILOGUE_BIAS) {          \
        start0 = svld1_f32(pg, ep->bias);         \
        start1 = svld1_vnum_f32(pg, ep->bias, 1); \
    }

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the clamp with
 * the tile's bounds, loaded once per tile (the bias is in the sums already: ACC_STARTS). `steps` is a constant at
 * every call, so each combination of steps is straight-line code. FMAX then FMIN, not FMAXNM/FMINNM: a NaN stays
 * NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row(float *c, svbool_t pg, svfloat32_t x0, svfloat32_t x1,
                                                            int accumulate, uint32_t steps, svfloat32_t lo,
                                                            svfloat32_t hi) {
    if (accumulate) {
        x0 = svadd_f32_x(pg, x0, svld1_f32(pg, c));
        x1 = svadd_f32_x(pg, x1, svld1_vnum_f32(pg, c, 1));
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = svmin_f32_x(pg, svmax_f32_x(pg, x0, lo), hi);
        x1 = svmin_f32_x(pg, svmax_f32_x(pg, x1, lo), hi);
    }
    svst1_f32(pg, c, x0);
    svst1_vnum_f32(pg, c, 1, x1);
}

#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, acc, steps, lo, hi)
#define TILE_STORE(steps, acc) ISF_SVE_TILE_STORE_F32(steps, acc)

#endif
