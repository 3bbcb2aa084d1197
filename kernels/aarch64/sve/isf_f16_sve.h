/*
 * The store and epilogue shared by gemm_f16_8x16_sve and gemm_f16_4x16_sve: rows of 2 vectors, row r's binary16
 * sums in c<r>0 (columns [0, VL/16)) and c<r>1 (the next VL/16). Each kernel owns its k loop and defines
 * ISF_TILE_ROWS(steps, acc) as ACC_STORE of each of its rows; TILE_FINISH() stores them. Include only from files
 * compiled with SVE and FP16 flags.
 */
#ifndef ISAFORGE_F16_SVE_H
#define ISAFORGE_F16_SVE_H

#include <arm_sve.h>

#include "isf_internal.h"
#include "isf_tile_steps.h"

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
        ISF_TILE_ROWS(steps, acc);                                                                                \
    } while (0)

#endif
