/* Multiplies a small fp32 matrix through libisaforge and prints the kernel dispatch chose. */
#include <isaforge/isaforge.h>
#include <stdio.h>

enum { M = 5, N = 11, K = 6 };

int main(void) {
    float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5) * 0.5f;
    if (isf_gemm_f32(M, N, K, a, K, b, N, c, N) != ISF_OK)
        return 1;
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0.0f;
            for (int p = 0; p < K; p++)
                want += a[i * K + p] * b[p * N + j];
            bad += c[i * N + j] != want;
        }
    printf("meson consumer: gemm_f32 kernel = %s, gemm_s8 kernel = %s\n", isf_kernel_name(ISF_OP_GEMM_F32),
           isf_kernel_name(ISF_OP_GEMM_S8));
    puts(bad ? "meson consumer: FAILED" : "meson consumer: ok");
    return bad != 0;
}
