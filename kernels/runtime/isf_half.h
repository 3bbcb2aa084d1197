/* Portable binary16 and bfloat16 conversions for the reference kernels (no __fp16 or FP16 hardware needed). */
#ifndef ISAFORGE_HALF_H
#define ISAFORGE_HALF_H

#include <stdint.h>
#include <string.h>

static inline float isf_bits_to_f32(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint32_t isf_f32_to_bits(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

#if defined(__ARM_FP16_FORMAT_IEEE)
/* The hardware converts (fcvt on AArch64, vcvt.f32.f16 with VFPv4): both are at the architecture baseline. */
static inline float isf_f16_to_f32(uint16_t h) {
    __fp16 v;
    memcpy(&v, &h, sizeof v);
    return (float)v;
}

static inline uint16_t isf_f32_to_f16(float f) {
    __fp16 v = (__fp16)f;
    uint16_t h;
    memcpy(&h, &v, sizeof h);
    return h;
}
#else
static inline float isf_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) { /* zero or subnormal: exact in fp32 */
        return isf_bits_to_f32(isf_f32_to_bits((float)mant * 0x1p-24f) | sign);
    }
    uint32_t bits = exp == 31 ? 0x7f800000u | (mant << 13) : ((exp + 112u) << 23) | (mant << 13);
    return isf_bits_to_f32(bits | sign);
}

/* Round to nearest even, overflow to infinity, NaN stays NaN (quiet). */
static inline uint16_t isf_f32_to_f16(float f) {
    uint32_t x = isf_f32_to_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x47800000u) { /* |f| ≥ 65536, infinity or NaN */
        return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
    }
    if (ax < 0x38800000u) { /* below binary16's normal range: let fp32 addition round at 2^-24 */
        float v = isf_bits_to_f32(ax) + 0.5f;
        return sign | (uint16_t)(isf_f32_to_bits(v) - 0x3f000000u);
    }
    uint32_t odd = (ax >> 13) & 1u;
    ax += 0xc8000fffu + odd; /* rebias the exponent from 127 to 15 and round half to even */
    return sign | (uint16_t)(ax >> 13);
}
#endif

static inline float isf_bf16_to_f32(uint16_t h) { return isf_bits_to_f32((uint32_t)h << 16); }

#endif
