/* The engine at work: its own dot product and libisaforge's int8 GEMM, each on the variant this CPU runs best,
 * checked against plain C. Prints what was chosen. */
#include <isaforge/isaforge.h>
#include <stdio.h>

#include "engine.h"

enum { LEN = 1003, M = 7, N = 9, K = 37 };

int main(void) {
    static int8_t x[LEN], y[LEN], a[M * K], b[K * N];
    static int32_t c[M * N];
    for (int i = 0; i < LEN; i++) {
        x[i] = (int8_t)((i * 29 + 3) % 255 - 127);
        y[i] = (int8_t)((i * 71 + 19) % 255 - 127);
    }
    for (int i = 0; i < M * K; i++) {
        a[i] = x[i];
    }
    for (int i = 0; i < K * N; i++) {
        b[i] = y[i];
    }
    int bad = engine_dot_s8(x, y, LEN) != engine_dot_s8_plain(x, y, LEN);
    if (isf_gemm_s8(M, N, K, a, K, b, N, c, N) != ISF_OK) {
        bad++;
    }
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            int32_t want = 0;
            for (int p = 0; p < K; p++) {
                want += (int32_t)a[i * K + p] * b[p * N + j];
            }
            bad += c[i * N + j] != want;
        }
    }
    printf("engine: cpu features %#x\n", (unsigned)isf_cpu_features());
    printf("engine: dot_s8 variant = %s\n", engine_dot_s8_variant());
    printf("engine: isaforge gemm_s8 kernel = %s\n", isf_kernel_name(ISF_OP_GEMM_S8));
    puts(bad ? "engine: FAILED" : "engine: ok");
    return bad ? 1 : 0;
}
