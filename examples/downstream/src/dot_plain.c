/* Plain C: compiled at the baseline, runs everywhere. */
#include "engine.h"

int32_t engine_dot_s8_plain(const int8_t *a, const int8_t *b, size_t n) {
    int32_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += (int32_t)a[i] * b[i];
    }
    return sum;
}
