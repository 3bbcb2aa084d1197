/* Clamp of binary16 values, the portable oracle: no half-precision type or conversion is needed, because for
 * non-NaN halves sign-magnitude bits order like the values once the negative ones are negated (both zeros map
 * to 0, so which zero a tie returns is unspecified, as it is for the vector kernels' max/min). */
#include "ecm_dispatch.h"

static int order_key(uint16_t h) { return (h & 0x8000u) ? -(int)(h & 0x7fffu) : (int)h; }

void ecm_clamp_f16_1x1_ref(const uint16_t *x, uint16_t *y, size_t n, uint16_t lo, uint16_t hi) {
    for (size_t i = 0; i < n; i++) {
        uint16_t v = x[i];
        if ((v & 0x7fffu) > 0x7c00u) {
            y[i] = (uint16_t)(v | 0x0200u); /* NaN in, quiet NaN out */
            continue;
        }
        if (order_key(v) < order_key(lo)) {
            v = lo;
        }
        if (order_key(v) > order_key(hi)) {
            v = hi;
        }
        y[i] = v;
    }
}
