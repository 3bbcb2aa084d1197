/* Runs a batch of GEMMs described by a job file (written by tests/gemm_jobs.py) and writes every C, so one QEMU
 * start checks thousands of shapes. Usage: gemm_runner JOB OUT [ALLOWED_MASK]. Prints the kernel used as JSON.
 *
 * Job: "ISFJ", u32 op, u32 cases, u32 flags, u64 a_bytes, u64 b_bytes, A, B, then per case u64 m n k lda ldb ldc.
 * flags bit 0: go through isf_pack_b + isf_gemm_packed instead of the one-call API.
 * Out: per case i32 status, then m*ldc output elements; C starts filled with 0xA5 bytes so writes outside the
 * m×n window (into the ldc padding) show. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isf_internal.h"

enum { SENTINEL = 0xA5 };

typedef struct {
    uint64_t m, n, k, lda, ldb, ldc;
} job_case;

static void *read_exact(FILE *f, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL || fread(p, 1, bytes, f) != bytes) {
        fprintf(stderr, "gemm_runner: short job file\n");
        exit(2);
    }
    return p;
}

static isf_status run_direct(uint32_t op, const job_case *jc, const void *a, const void *b, void *c) {
    switch (op) {
    case ISF_OP_GEMM_F32:
        return isf_gemm_f32(jc->m, jc->n, jc->k, a, jc->lda, b, jc->ldb, c, jc->ldc);
    case ISF_OP_GEMM_F16:
        return isf_gemm_f16(jc->m, jc->n, jc->k, a, jc->lda, b, jc->ldb, c, jc->ldc);
    case ISF_OP_GEMM_BF16:
        return isf_gemm_bf16(jc->m, jc->n, jc->k, a, jc->lda, b, jc->ldb, c, jc->ldc);
    case ISF_OP_GEMM_S8:
        return isf_gemm_s8(jc->m, jc->n, jc->k, a, jc->lda, b, jc->ldb, c, jc->ldc);
    default:
        return ISF_ERR_UNSUPPORTED;
    }
}

static isf_status run_packed(uint32_t op, const job_case *jc, const void *a, const void *b, void *c) {
    size_t bytes = isf_packed_b_size((isf_op)op, jc->n, jc->k);
    void *packed = bytes ? malloc(bytes) : NULL;
    if (packed == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    isf_status st = isf_pack_b((isf_op)op, jc->n, jc->k, b, jc->ldb, packed, bytes);
    if (st == ISF_OK) {
        st = isf_gemm_packed((isf_op)op, jc->m, jc->n, jc->k, a, jc->lda, packed, c, jc->ldc);
    }
    free(packed);
    return st;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gemm_runner JOB OUT [ALLOWED_MASK]\n");
        return 2;
    }
    if (argc > 3) {
        isf_set_feature_mask((uint32_t)strtoul(argv[3], NULL, 0));
    }
    FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
    if (in == NULL || out == NULL) {
        perror("gemm_runner");
        return 2;
    }
    uint32_t head[4];
    uint64_t sizes[2];
    if (fread(head, sizeof head, 1, in) != 1 || memcmp(head, "ISFJ", 4) != 0 || fread(sizes, sizeof sizes, 1, in) != 1) {
        fprintf(stderr, "gemm_runner: not a job file\n");
        return 2;
    }
    uint32_t op = head[1], cases = head[2], packed = head[3] & 1u;
    void *a = read_exact(in, sizes[0]), *b = read_exact(in, sizes[1]);
    job_case *jobs = read_exact(in, cases * sizeof *jobs);
    size_t out_bytes = isf_ops[op].out_bytes;
    for (uint32_t i = 0; i < cases; i++) {
        size_t c_bytes = jobs[i].m * jobs[i].ldc * out_bytes;
        void *c = malloc(c_bytes ? c_bytes : 1);
        memset(c, SENTINEL, c_bytes);
        int32_t st = packed ? run_packed(op, &jobs[i], a, b, c) : run_direct(op, &jobs[i], a, b, c);
        fwrite(&st, sizeof st, 1, out);
        fwrite(c, 1, c_bytes, out);
        free(c);
    }
    const char *name = isf_kernel_name((isf_op)op);
    printf("{\"kernel\": \"%s\", \"active\": %u}\n", name ? name : "", isf_active_features());
    fclose(out);
    fclose(in);
    free(a), free(b), free(jobs);
    return 0;
}
