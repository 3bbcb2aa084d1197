/* test_package: what an engine does with libisaforge. Multiplies small int8 and fp32 matrices, checks them
 * against plain loops, and prints the micro-kernel dispatch chose for every op on this CPU. */
#include <isaforge/isaforge.h>
#include <stdio.h>

enum { M = 13, N = 17, K = 29 };

int main(void) {
    static int8_t a8[M * K], b8[K * N];
    static int32_t c8[M * N];
    static float af[M * K], bf[K * N], cf[M * N];
    for (int i = 0; i < M * K; i++) {
        a8[i] = (int8_t)((i * 37 + 11) % 255 - 127);
        af[i] = (float)((i * 7) % 19 - 9) / 8.0f;
    }
    for (int i = 0; i < K * N; i++) {
        b8[i] = (int8_t)((i * 53 + 5) % 255 - 127);
        bf[i] = (float)((i * 5) % 23 - 11) / 4.0f;
    }
    if (isf_gemm_s8(M, N, K, a8, K, b8, N, c8, N) != ISF_OK || isf_gemm_f32(M, N, K, af, K, bf, N, cf, N) != ISF_OK) {
        puts("isaforge test_package: FAILED (gemm returned an error)");
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            int32_t want8 = 0;
            float wantf = 0.0f;
            for (int p = 0; p < K; p++) {
                want8 += (int32_t)a8[i * K + p] * b8[p * N + j];
                wantf += af[i * K + p] * bf[p * N + j]; /* exact: small dyadic values, any order */
            }
            bad += c8[i * N + j] != want8;
            bad += cf[i * N + j] != wantf;
        }
    }
    printf("isaforge test_package: cpu features %#x, active %#x\n", (unsigned)isf_cpu_features(),
           (unsigned)isf_active_features());
    for (int op = 0; op < ISF_OP_COUNT; op++) {
        const char *name = isf_kernel_name((isf_op)op);
        printf("isaforge kernel %s = %s\n", isf_op_name((isf_op)op), name ? name : "(none)");
    }
    if (bad) {
        printf("isaforge test_package: FAILED (%d wrong elements)\n", bad);
        return 1;
    }
    puts("isaforge test_package: ok");
    return 0;
}
