/* The engine's own portable qdot: the fallback and the tests' oracle. */
#include <string.h>

#include "veng_dispatch.h"

uint16_t veng_qdot_s8_1x1_ref(const int8_t *a, const int8_t *b, size_t n, uint16_t scale) {
    int32_t dot = 0;
    for (size_t i = 0; i < n; i++) {
        dot += a[i] * b[i];
    }
    __fp16 s, h;
    memcpy(&s, &scale, sizeof s);
    h = (__fp16)((float)(__fp16)(float)dot * (float)s); /* binary16 × binary16 is exact in fp32: one rounding */
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}
