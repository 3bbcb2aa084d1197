/*
 * The sums' start (the bias) and the store with the clamp shared by gemm_f16_8x16_sve and gemm_f16_4x16_sve: rows of 2
 * vectors, row r's binary16 sums in c<r>0 (columns [0, VL/16)) and c<r>1 (the next VL/16). Each kernel owns its k loop
 * and defines ISF_TILE_ROWS(steps, acc) as ACC_STORE of each of its rows; TILE_FINISH() stores them. Include only from
 * files compiled with SVE and FP16 flags.
 */
#ifndef ISAFORGE_F16_SVE_H
#define ISAFORGE_F16_SVE_H

#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

#define F16_DUP(bits) svreinterpret_f16_u16(svdup_n_u16(bits))
#define F16_LOAD(p, vnum) svreinterpret_f16_u16(svld1_vnum_u16(pg, (const uint16_t *)(p), vnum))

/*
 * Where the tile's sums start (SVE vectors cannot live in a struct: locals start0, start1 and zero): its bias
 * (binary16, as C) when its steps add one, else zero. The bias is one more term of each sum, added first rather
 * than last (the same error bound, gemmjob.error_bound: any order), which spares the store a vector addition per
 * accumulator. The kernel writes ACC_STARTS(); after its `pg` and starts its first set of rows' accumulators at
 * start0 / start1, any further set (the sums of other k steps, folded into the first after the loop) at zero.
 */
#define ACC_STARTS()                          \
    const svfloat16_t zero = F16_DUP(0);      \
    svfloat16_t start0 = zero, start1 = zero; \
    if (ep->steps & ISF_EPILOGUE_BIAS) {      \
        start0 = F16_LOAD(ep->bias, 0);       \
        start1 = F16_LOAD(ep->bias, 1);       \
    }

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the clamp in
 * binary16 like the accumulation, with the tile's bounds, loaded once per tile (the bias is in the sums already:
 * ACC_STARTS). `steps` is a constant at every call, so each combination of steps is straight-line code. FMAX then
 * FMIN, not FMAXNM/FMINNM: a NaN stays NaN, as the epilogue contract says.
 */
static inline __attribute__((always_inline)) void store_row(uint16_t *c, svbool_t pg, svfloat16_t x0, svfloat16_t x1,
                                                            int accumulate, uint32_t steps, svfloat16_t lo,
                                                            svfloat16_t hi) {
    if (accumulate) {
        x0 = svadd_f16_x(pg, x0, svreinterpret_f16_u16(svld1_u16(pg, c)));
        x1 = svadd_f16_x(pg, x1, svreinterpret_f16_u16(svld1_vnum_u16(pg, c, 1)));
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = svmin_f16_x(pg, svmax_f16_x(pg, x0, lo), hi);
        x1 = svmin_f16_x(pg, svmax_f16_x(pg, x1, lo), hi);
    }
    svst1_u16(pg, c, svreinterpret_u16_f16(x0));
    svst1_vnum_u16(pg, c, 1, svreinterpret_u16_f16(x1));
}

#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, pg, c##r##0, c##r##1, acc, steps, lo, hi)
/* The clamp's bounds are locals, loaded only when it clamps. */
#define TILE_STORE(steps, acc)                                       \
    do {                                                             \
        const int has_clamp = ((steps) & ISF_EPILOGUE_CLAMP) != 0;   \
        const svfloat16_t lo = F16_DUP(has_clamp ? ep->min_f16 : 0); \
        const svfloat16_t hi = F16_DUP(has_clamp ? ep->max_f16 : 0); \
        ISF_TILE_ROWS(steps, acc);                                   \
    } while (0)

#endif
