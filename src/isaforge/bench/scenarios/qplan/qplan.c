/* One plan of libisaforge, created, run once and destroyed, for isaforge bench's quantized section (bench/qplans.py):
 * linked statically with libisaforge.a so QEMU's log can be cut at isf_gemm_run's entry and isf_gemm_destroy's.
 * Only the public API (isaforge.h): any op a plan takes, quantized or not (quant NULL for the plain ops).
 *
 * Usage: qplan JOB OUTPUT. JOB (little-endian): u32 op, m, n, k, has_quant, w_scale_count, has_bias; f32 a_scale;
 *   i32 a_zero_point; f32 c_scale; i32 c_zero_point; char kernel[64] ("" automatic choice); u32 c_bytes (bytes of
 *   one C element); then w_scales (f32 × count), A [m][k] (a_bytes each), W [k][n] (u32 byte count before it; int4 two per byte as isaforge.h stores them), bias
 *   [n] (u32 byte count before it, 0 for none).
 * OUTPUT: i32 status, then C [m][n]. stdout: {"kernel": "<the kernel the plan ran>"}. */
#include <isaforge/isaforge.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t op, m, n, k, has_quant, scale_count, has_bias;
    float a_scale;
    int32_t a_zp;
    float c_scale;
    int32_t c_zp;
    char kernel[64];
    uint32_t c_bytes, a_bytes;
} header;

static void *read_block(FILE *f, size_t bytes) {
    void *p = malloc(bytes + 64);
    if (p != NULL && bytes > 0 && fread(p, 1, bytes, f) != bytes) {
        free(p);
        return NULL;
    }
    return p;
}

static int read_u32(FILE *f, uint32_t *v) { return fread(v, sizeof *v, 1, f) == 1; }

int main(int argc, char **argv) {
    FILE *in = argc == 3 ? fopen(argv[1], "rb") : NULL;
    header h;
    if (in == NULL || fread(&h, sizeof h, 1, in) != 1) {
        fprintf(stderr, "usage: qplan JOB OUTPUT (a job file of isaforge.bench.qplans)\n");
        return 2;
    }
    h.kernel[63] = '\0';
    uint32_t w_bytes = 0, bias_bytes = 0;
    float *scales = read_block(in, (size_t)h.scale_count * sizeof(float));
    void *a = read_block(in, (size_t)h.m * h.k * h.a_bytes);
    void *w = read_u32(in, &w_bytes) ? read_block(in, w_bytes) : NULL;
    void *bias = w != NULL && read_u32(in, &bias_bytes) ? read_block(in, bias_bytes) : NULL;
    void *c = malloc((size_t)h.m * h.n * h.c_bytes + 64);
    if (scales == NULL || a == NULL || w == NULL || bias == NULL || c == NULL) {
        fprintf(stderr, "qplan: short or unreadable job %s\n", argv[1]);
        return 2;
    }
    fclose(in);
    isf_quant_params q = {.a_scale = h.a_scale,
                          .a_zero_point = h.a_zp,
                          .w_scales = scales,
                          .w_scale_count = h.scale_count,
                          .c_scale = h.c_scale,
                          .c_zero_point = h.c_zp}; /* w_bits 0: the op's; w_block 0: per channel */
    isf_gemm_desc d = {.op = (isf_op)h.op,
                       .n = h.n,
                       .k = h.k,
                       .weights = w,
                       .ldw = h.n,
                       .layout = ISF_WEIGHTS_KN,
                       .bias = bias_bytes ? bias : NULL,
                       .quant = h.has_quant ? &q : NULL};
    isf_status st = isf_select_kernel((isf_op)h.op, h.kernel[0] ? h.kernel : NULL);
    isf_gemm *plan = NULL;
    st = st == ISF_OK ? isf_gemm_create(&d, &plan) : st;
    if (st == ISF_OK) {
        st = isf_gemm_run(plan, h.m, a, h.k, c, h.n, 0);
    }
    isf_gemm_destroy(plan);
    const char *name = isf_kernel_name((isf_op)h.op);
    printf("{\"kernel\": \"%s\"}\n", name != NULL ? name : "");
    FILE *out = fopen(argv[2], "wb");
    int32_t status = (int32_t)st;
    size_t c_size = st == ISF_OK ? (size_t)h.m * h.n * h.c_bytes : 0;
    if (out == NULL || fwrite(&status, sizeof status, 1, out) != 1 || fwrite(c, 1, c_size, out) != c_size ||
        fclose(out) != 0) {
        fprintf(stderr, "qplan: cannot write %s\n", argv[2]);
        return 1;
    }
    free(scales), free(a), free(w), free(bias), free(c);
    return 0;
}
