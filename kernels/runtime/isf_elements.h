/* Elements of an op's buffers as numbers, for the tools and tests that fill and read them through one code path
 * whatever the op (isaforge-info --check, the C test programs). The op table says which kind each buffer holds. */
#ifndef ISAFORGE_ELEMENTS_H
#define ISAFORGE_ELEMENTS_H

#include "isf_half.h"
#include "isf_internal.h"

/* Stores the integer v as element i of a buffer of op's input type (exact for the small integers callers use). */
static inline void isf_put_input(isf_op op, void *buf, size_t i, int v) {
    switch (isf_ops[op].in_kind) {
    case ISF_ELEM_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case ISF_ELEM_BINARY16:
        ((uint16_t *)buf)[i] = isf_f32_to_f16((float)v);
        break;
    case ISF_ELEM_BFLOAT16:
        ((uint16_t *)buf)[i] = (uint16_t)(isf_f32_to_bits((float)v) >> 16);
        break;
    case ISF_ELEM_INT:
        isf_ops[op].in_bytes == 1 ? (void)(((int8_t *)buf)[i] = (int8_t)v) : (void)(((int32_t *)buf)[i] = v);
        break;
    }
}

/* Element i of a buffer of op's output type, as a double. */
/* One element of C's type from a double (NaN and ±Inf included for the float kinds; a small integer for int32). */
static inline void isf_put_output(isf_op op, void *buf, size_t i, double v) {
    switch (isf_ops[op].out_kind) {
    case ISF_ELEM_BINARY16:
        ((uint16_t *)buf)[i] = isf_f32_to_f16((float)v);
        return;
    case ISF_ELEM_BFLOAT16:
        ((uint16_t *)buf)[i] = (uint16_t)(isf_f32_to_bits((float)v) >> 16);
        return;
    case ISF_ELEM_INT:
        ((int32_t *)buf)[i] = (int32_t)v;
        return;
    case ISF_ELEM_FLOAT:
        break;
    }
    ((float *)buf)[i] = (float)v;
}

static inline double isf_get_output(isf_op op, const void *buf, size_t i) {
    switch (isf_ops[op].out_kind) {
    case ISF_ELEM_BINARY16:
        return isf_f16_to_f32(((const uint16_t *)buf)[i]);
    case ISF_ELEM_BFLOAT16:
        return isf_bf16_to_f32(((const uint16_t *)buf)[i]);
    case ISF_ELEM_INT:
        return isf_ops[op].out_bytes == 1 ? ((const int8_t *)buf)[i] : ((const int32_t *)buf)[i];
    case ISF_ELEM_FLOAT:
        break;
    }
    return ((const float *)buf)[i];
}

#endif
