/* Exported plans across processes (tests/kernels/runtime/test_plan_file.py runs the two halves under QEMU, on the
 * same or different CPU models):
 *   test_plan_file export FILE OP   plan of OP (W[n][k], bias, clamp for float C) → FILE; its C at m = 9 → FILE.c;
 *                                   prints "exported <kernel>"
 *   test_plan_file import FILE OP   import FILE, run m = 9, compare with FILE.c byte for byte: prints "same C",
 *                                   or "unsupported" when no kernel here reads the plan's layout.
 * Exit status: 0 when the half did what it prints, else 1. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <stdlib.h>

enum { M = 9, N = 37, K = 29, MAX_ELEM = 4 };

static size_t c_bytes(isf_op op) { return (size_t)M * N * isf_ops[op].out_bytes; }

/* Buffers aligned for their element type: AArch32 faults on misaligned multi-word accesses. */
static int run(isf_op op, const isf_gemm *g, unsigned char *c) {
    static _Alignas(16) unsigned char a[M * K * MAX_ELEM];
    fill_matrix(op, a, M, K, K, 1);
    return isf_gemm_run(g, M, a, K, c, N, 0) == ISF_OK;
}

static int export_plan(const char *path, isf_op op) {
    static _Alignas(16) unsigned char w[N * K * MAX_ELEM], bias[N * MAX_ELEM], c[M * N * MAX_ELEM];
    fill_matrix(op, w, N, K, K, 2); /* W[n][k] */
    for (size_t j = 0; j < N; j++) {
        isf_put_output(op, bias, j, small_value(j, 0, 4));
    }
    int is_int = isf_ops[op].out_kind == ISF_ELEM_INT;
    isf_gemm_desc d = {.op = op, .n = N, .k = K, .weights = w, .ldw = K, .layout = ISF_WEIGHTS_NK, .bias = bias};
    d.flags = is_int ? 0 : ISF_GEMM_CLAMP, d.out_min = -5, d.out_max = 7;
    isf_gemm *g = NULL;
    if (isf_gemm_create(&d, &g) != ISF_OK || !run(op, g, c)) {
        return 0;
    }
    size_t size = isf_gemm_export_size(g);
    unsigned char *bytes = malloc(size);
    char out_path[4096];
    snprintf(out_path, sizeof out_path, "%s.c", path);
    FILE *f = fopen(path, "wb"), *fc = fopen(out_path, "wb");
    int ok = bytes != NULL && f != NULL && fc != NULL && isf_gemm_export(g, bytes, size) == ISF_OK &&
             fwrite(bytes, 1, size, f) == size && fwrite(c, 1, c_bytes(op), fc) == c_bytes(op);
    ok = (f == NULL || fclose(f) == 0) && (fc == NULL || fclose(fc) == 0) && ok;
    printf("exported %s\n", isf_kernel_name(op));
    free(bytes);
    isf_gemm_destroy(g);
    return ok;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(1u << 20);
    *size = f != NULL && buf != NULL ? fread(buf, 1, 1u << 20, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    return buf;
}

static int import_plan(const char *path, isf_op op) {
    char out_path[4096];
    snprintf(out_path, sizeof out_path, "%s.c", path);
    size_t size = 0, c_size = 0;
    unsigned char *bytes = read_file(path, &size), *want = read_file(out_path, &c_size);
    static _Alignas(16) unsigned char c[M * N * MAX_ELEM];
    isf_gemm *g = NULL;
    isf_status st = isf_gemm_import(bytes, size, &g);
    int ok = 0;
    if (st == ISF_ERR_UNSUPPORTED && g == NULL) {
        printf("unsupported\n");
        ok = 1;
    } else if (st == ISF_OK && c_size == c_bytes(op) && run(op, g, c) && memcmp(c, want, c_size) == 0) {
        printf("same C\n");
        ok = 1;
    } else {
        printf("import status %d, C %s\n", (int)st, st == ISF_OK ? "differs" : "not computed");
    }
    isf_gemm_destroy(g);
    free(bytes), free(want);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: test_plan_file export|import FILE OP\n");
        return 2;
    }
    isf_op op = (isf_op)atoi(argv[3]);
    int ok = strcmp(argv[1], "export") == 0 ? export_plan(argv[2], op) : import_plan(argv[2], op);
    return ok ? 0 : 1;
}
