/* Byte copies for the runtime without library calls (so `isaforge bench` counts them): whole vectors, then one
 * that ends at n and may overlap the last; straight-line code when n is a constant. Baseline NEON only. */
#ifndef ISAFORGE_COPY_H
#define ISAFORGE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#define ISF_INLINE static inline __attribute__((always_inline))

static inline void isf_copy16(unsigned char *d, const unsigned char *s) {
#if defined(__ARM_NEON)
    vst1q_u8(d, vld1q_u8(s));
#else
    memcpy(d, s, 16);
#endif
}

/* n bytes: whole vectors, then, for what is left, one more that ends at n and may overlap the last (so no byte
 * loops); straight-line code when n is a constant. */
ISF_INLINE void isf_copy_bytes(unsigned char *d, const unsigned char *s, size_t n) {
#if defined(__aarch64__)
    if (n >= 16) {
        for (; n > 64; n -= 64, d += 64, s += 64) {
            vst1q_u8_x4(d, vld1q_u8_x4(s));
        }
        if (n == 64) {
            vst1q_u8_x4(d, vld1q_u8_x4(s));
        } else if (n >= 48) {
            vst1q_u8_x3(d, vld1q_u8_x3(s));
        } else if (n >= 32) {
            vst1q_u8_x2(d, vld1q_u8_x2(s));
        } else if (n >= 16) {
            vst1q_u8(d, vld1q_u8(s));
        }
        if (n % 16) { /* n > 16 at first: the bytes before d + n - 16 exist */
            vst1q_u8(d + n - 16, vld1q_u8(s + n - 16));
        }
        return;
    }
#else
    for (; n >= 16; n -= 16, d += 16, s += 16) {
        isf_copy16(d, s);
    }
#endif
    if (n >= 8) {
        uint64_t x, y; /* both loads first: the two may overlap */
        memcpy(&x, s, 8), memcpy(&y, s + n - 8, 8);
        memcpy(d, &x, 8), memcpy(d + n - 8, &y, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4), memcpy(&y, s + n - 4, 4);
        memcpy(d, &x, 4), memcpy(d + n - 4, &y, 4);
    } else if (n >= 2) {
        uint16_t x, y;
        memcpy(&x, s, 2), memcpy(&y, s + n - 2, 2);
        memcpy(d, &x, 2), memcpy(d + n - 2, &y, 2);
    } else if (n) {
        *d = *s;
    }
}

#endif
