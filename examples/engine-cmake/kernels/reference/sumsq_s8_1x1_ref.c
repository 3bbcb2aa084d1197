/* Sum of squares, the portable oracle: one element at a time in 64 bits, so it cannot overflow below n = 2^49. */
#include "ecm_dispatch.h"

int64_t ecm_sumsq_s8_1x1_ref(const int8_t *x, size_t n) {
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += (int32_t)x[i] * x[i];
    }
    return sum;
}
