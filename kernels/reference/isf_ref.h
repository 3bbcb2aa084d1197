/* The one loop every floating-point reference kernel runs: a 4×4 tile accumulated in fp32, in k order. */
#ifndef ISAFORGE_REF_H
#define ISAFORGE_REF_H

#include <stddef.h>

#include "isf_half.h"
#include "isf_internal.h"

enum { ISF_REF_MR = 4, ISF_REF_NR = 4 };

typedef float (*isf_ref_load)(const void *panel, size_t index);

static inline float isf_ref_load_f32(const void *p, size_t i) { return ((const float *)p)[i]; }
static inline float isf_ref_load_f16(const void *p, size_t i) { return isf_f16_to_f32(((const uint16_t *)p)[i]); }
static inline float isf_ref_load_bf16(const void *p, size_t i) { return isf_bf16_to_f32(((const uint16_t *)p)[i]); }

static inline void isf_ref_tile(size_t k_blocks, const void *a, const void *b, isf_ref_load load,
                                float acc[ISF_REF_MR][ISF_REF_NR]) {
    for (int i = 0; i < ISF_REF_MR; i++) {
        for (int j = 0; j < ISF_REF_NR; j++) {
            acc[i][j] = 0.0f;
        }
    }
    for (size_t kb = 0; kb < k_blocks; kb++) {
        for (int i = 0; i < ISF_REF_MR; i++) {
            for (int j = 0; j < ISF_REF_NR; j++) {
                acc[i][j] += load(a, kb * ISF_REF_MR + (size_t)i) * load(b, kb * ISF_REF_NR + (size_t)j);
            }
        }
    }
}

/* The tile into C: with C's old value when accumulating, then the epilogue's steps (isf_internal.h). */
static inline void isf_ref_store_f32(float *c, size_t ldc, const float acc[ISF_REF_MR][ISF_REF_NR], int accumulate,
                                     const isf_epilogue *ep) {
    const float *bias = ep->steps & ISF_EPILOGUE_BIAS ? ep->bias : NULL;
    for (int i = 0; i < ISF_REF_MR; i++) {
        for (int j = 0; j < ISF_REF_NR; j++) {
            float *out = &c[(size_t)i * ldc + (size_t)j];
            float v = accumulate ? *out + acc[i][j] : acc[i][j];
            v = bias != NULL ? v + bias[j] : v;
            *out = ep->steps & ISF_EPILOGUE_CLAMP ? isf_clamp_f32(v, ep->min, ep->max) : v;
        }
    }
}

#endif
