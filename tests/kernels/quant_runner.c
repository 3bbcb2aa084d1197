/* Runs batches of quantized plans (and gemm_s8's and gemm_s4's, which take no quant) for pytest's numpy oracle
 * (tests/kernels/runtime/test_quantized.py) and for isaforge bench's counts of them (linked statically there): jobs
 * from a file, each C written back with whether the bytes around and between its rows stayed untouched. The format
 * is isaforge.quantjob's (written and read there): per job a header (op, m, n, k, layout, flags, mode: 0
 * isf_gemm_run, 1 its tiles in reverse order, 2 isf_gemm_run after an export and import; w_scales count, has_bias,
 * out_min, out_max, a_scale, a_zero_point, c_scale, c_zero_point, w_bits, w_block, a 64-byte kernel name, ""
 * automatic), then w_scales, A (m×k), W, bias (n × 4 bytes). Result per job: status (i32), guard flag (i32), then C
 * (m×n); stdout: {"kernel": "<the kernel the plan ran>"} per job. argv: jobs results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isf_internal.h"

enum { GUARD = 64, FILL = 0xA5, PAD = 3 };

typedef struct {
    uint32_t op, m, n, k, layout, flags, mode, scale_count, has_bias;
    float out_min, out_max, a_scale;
    int32_t a_zp;
    float c_scale;
    int32_t c_zp;
    uint32_t w_bits, w_block;
    char kernel[64];
} job;

static int read_all(FILE *f, void *p, size_t bytes) { return bytes == 0 || fread(p, 1, bytes, f) == bytes; }

static int untouched(const unsigned char *p, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        if (p[i] != FILL) {
            return 0;
        }
    }
    return 1;
}

/* C's rows with PAD elements between them and GUARD bytes on both sides: all must keep FILL. */
static int guards_kept(const unsigned char *block, const job *j, size_t out, size_t ldc, size_t c_bytes) {
    int ok = untouched(block, GUARD) && untouched(block + GUARD + c_bytes, GUARD);
    for (size_t i = 0; i < j->m; i++) {
        ok = ok && untouched(block + GUARD + (i * ldc + j->n) * out, (ldc - j->n) * out);
    }
    return ok;
}

/* The plan through its export: exported, destroyed, imported from a copy at an odd address. */
static isf_status reimport(isf_gemm **g) {
    size_t bytes = isf_gemm_export_size(*g);
    unsigned char *buf = malloc(bytes + 1);
    isf_status st = buf == NULL ? ISF_ERR_NO_MEMORY : isf_gemm_export(*g, buf + 1, bytes);
    isf_gemm_destroy(*g);
    *g = NULL;
    st = st == ISF_OK ? isf_gemm_import(buf + 1, bytes, g) : st;
    free(buf);
    return st;
}

static isf_status run(const job *j, const isf_gemm_desc *d, const void *a, size_t lda, void *c, size_t ldc) {
    isf_status st = isf_select_kernel((isf_op)j->op, j->kernel[0] ? j->kernel : NULL);
    isf_gemm *g = NULL;
    st = st == ISF_OK ? isf_gemm_create(d, &g) : st;
    st = st == ISF_OK && j->mode == 2 ? reimport(&g) : st;
    if (st == ISF_OK && j->mode == 1) {
        for (size_t t = isf_gemm_tile_count(g, j->m); st == ISF_OK && t > 0; t--) {
            st = isf_gemm_run_tiles(g, j->m, a, lda, c, ldc, 0, t - 1, 1);
        }
    } else if (st == ISF_OK) {
        st = isf_gemm_run(g, j->m, a, lda, c, ldc, 0);
    }
    isf_gemm_destroy(g);
    return st;
}

static int one_job(FILE *in, FILE *out) {
    job j;
    if (!read_all(in, &j, sizeof j)) {
        return 0;
    }
    const isf_op_info *op = &isf_ops[j.op < isf_op_count ? j.op : 0];
    size_t a_bytes = (size_t)j.m * j.k * op->in_bytes, w_bytes = ((size_t)j.n * j.k * op->w_bits + 7) / 8,
           lda = j.k + PAD, ldc = j.n + PAD;
    size_t c_bytes = (size_t)j.m * ldc * op->out_bytes;
    float *scales = malloc(j.scale_count * sizeof(float) + 1);
    unsigned char *a = malloc(a_bytes + 1), *w = malloc(w_bytes + 1), *bias = malloc((size_t)j.n * 4 + 1);
    unsigned char *a_ld = calloc((size_t)j.m * lda + 1, op->in_bytes), *block = malloc(c_bytes + 2 * GUARD);
    int ok = scales && a && w && bias && a_ld && block && read_all(in, scales, j.scale_count * sizeof(float)) &&
             read_all(in, a, a_bytes) && read_all(in, w, w_bytes) && read_all(in, bias, (size_t)j.n * 4);
    if (ok) {
        for (size_t i = 0; i < j.m; i++) { /* A with a leading dimension above k */
            memcpy(a_ld + i * lda * op->in_bytes, a + i * j.k * op->in_bytes, j.k * op->in_bytes);
        }
        memset(block, FILL, c_bytes + 2 * GUARD);
        isf_quant_params q = {j.a_scale, j.a_zp, scales, j.scale_count, j.c_scale, j.c_zp, j.w_bits, j.w_block};
        int nk = j.layout == ISF_WEIGHTS_NK;
        isf_gemm_desc d = {(isf_op)j.op,
                           j.n,
                           j.k,
                           w,
                           nk ? j.k : j.n,
                           (isf_weights_layout)j.layout,
                           j.has_bias ? bias : NULL,
                           j.flags,
                           j.out_min,
                           j.out_max,
                           op->quantized ? &q : NULL};
        int32_t st = (int32_t)run(&j, &d, a_ld, lda, block + GUARD, ldc);
        const char *name = isf_kernel_name((isf_op)j.op);
        printf("{\"kernel\": \"%s\"}\n", name != NULL ? name : "");
        int32_t guards = guards_kept(block, &j, op->out_bytes, ldc, c_bytes);
        fwrite(&st, sizeof st, 1, out), fwrite(&guards, sizeof guards, 1, out);
        for (size_t i = 0; i < j.m; i++) {
            fwrite(block + GUARD + i * ldc * op->out_bytes, op->out_bytes, j.n, out);
        }
    }
    free(scales), free(a), free(w), free(bias), free(a_ld), free(block);
    return ok;
}

/* "list <op>": the runnable kernels of the op, one per line. */
static int list(isf_op op) {
    isf_kernel_desc d;
    for (size_t i = 0; isf_kernel_info(op, i, &d) == ISF_OK; i++) {
        if (d.runnable) {
            printf("%s\n", d.name);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "list") == 0) {
        return list((isf_op)atoi(argv[2]));
    }
    FILE *in = argc == 3 ? fopen(argv[1], "rb") : NULL, *out = argc == 3 ? fopen(argv[2], "wb") : NULL;
    if (in == NULL || out == NULL) {
        fprintf(stderr, "usage: quant_runner JOBS RESULTS | quant_runner list OP\n");
        return 2;
    }
    while (one_job(in, out)) {
    }
    fclose(in);
    return fclose(out) != 0;
}
