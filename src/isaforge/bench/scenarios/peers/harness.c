/* The protocol of harness.h: argv, the input and output files, the guard bytes around C and the window markers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { MAGIC_BYTES = 4, HEADER_BYTES = 28, VERSION = 1, GUARD = 64, SENTINEL = 0xA5, ALIGN = 64 };

/* noipa (GCC): besides never inlining, GCC must not fold the two identical bodies into one symbol (identical code
 * folding) nor let the callers assume anything about them; the asm keeps the calls where they are in the sequence. */
#if defined(__GNUC__) && !defined(__clang__)
#define MARKER __attribute__((noipa, used))
#else
#define MARKER __attribute__((noinline, used))
#endif

MARKER void isf_bench_begin(void) { __asm__ volatile("" ::: "memory"); }
MARKER void isf_bench_end(void) { __asm__ volatile("" ::: "memory"); }

static const char *const precision_names[ISF_BENCH_PRECISIONS] = {"fp32", "fp16", "bf16", "int8", "qs8", "qd8", "qc4w"};
static const size_t a_bytes_of[ISF_BENCH_PRECISIONS] = {4, 2, 2, 1, 1, 4, 4};
static const size_t b_bytes_of[ISF_BENCH_PRECISIONS] = {4, 2, 2, 1, 1, 1, 1};
/* The bias's element (C's type) where the input carries an epilogue; 0: none (int8 and qs8). */
static const size_t bias_bytes_of[ISF_BENCH_PRECISIONS] = {4, 2, 4, 0, 0, 4, 4};
static const char *const mode_names[] = {"plain", "prepacked"};

static size_t element_bytes(isf_bench_element e) {
    return e == ISF_BENCH_ELEMENT_F16 ? 2 : e == ISF_BENCH_ELEMENT_I8 ? 1 : 4;
}

static int lookup(const char *name, const char *const *names, int count) {
    for (int i = 0; i < count; i++) {
        if (strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static int usage(const char *why) {
    fprintf(stderr,
            "%s harness: %s (usage: PRECISION MODE INPUT OUTPUT; fp32|fp16|bf16|int8|qs8|qd8|qc4w, "
            "plain|prepacked)\n",
            isf_bench_library, why);
    return 2;
}

/* A 64-byte aligned copy, as an engine's tensors are: the libraries' timings must not depend on the file's offsets.
 */
static void *aligned_copy(const unsigned char *src, size_t bytes) {
    void *dst = aligned_alloc(ALIGN, (bytes + ALIGN - 1) / ALIGN * ALIGN + ALIGN);
    if (dst != NULL) {
        memcpy(dst, src, bytes);
    }
    return dst;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
        if (f != NULL) {
            fclose(f);
        }
        return NULL;
    }
    long end = ftell(f);
    unsigned char *data = end >= 0 ? malloc((size_t)end + 1) : NULL;
    if (data == NULL || fseek(f, 0, SEEK_SET) != 0 || fread(data, 1, (size_t)end, f) != (size_t)end) {
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (size_t)end;
    return data;
}

static uint32_t u32_at(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int guards_intact(const unsigned char *buf, size_t c_bytes) {
    for (size_t i = 0; i < GUARD; i++) {
        if (buf[i] != SENTINEL || buf[GUARD + c_bytes + i] != SENTINEL) {
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        return usage("4 arguments expected");
    }
    int precision = lookup(argv[1], precision_names, ISF_BENCH_PRECISIONS), mode = lookup(argv[2], mode_names, 2);
    if (precision < 0 || mode < 0) {
        return usage("unknown precision or mode");
    }
    if (!isf_bench_offers((isf_bench_precision)precision, (isf_bench_mode)mode)) {
        char offered[256] = "";
        for (int p = 0; p < ISF_BENCH_PRECISIONS; p++) {
            for (int m = 0; m < 2; m++) {
                if (isf_bench_offers((isf_bench_precision)p, (isf_bench_mode)m)) {
                    size_t used = strlen(offered);
                    snprintf(offered + used, sizeof offered - used, "%s%s %s", used ? ", " : "", precision_names[p],
                             mode_names[m]);
                }
            }
        }
        fprintf(stderr, "%s does not offer %s %s (it offers: %s)\n", isf_bench_library, argv[1], argv[2], offered);
        return 2;
    }
    size_t size = 0;
    unsigned char *data = read_file(argv[3], &size);
    if (data == NULL || size < HEADER_BYTES || memcmp(data, "ISFP", MAGIC_BYTES) != 0 || u32_at(data + 4) != VERSION) {
        return usage("the input is not an ISFP version 1 file");
    }
    isf_bench_problem p = {.precision = (isf_bench_precision)precision,
                           .mode = (isf_bench_mode)mode,
                           .m = u32_at(data + 8),
                           .n = u32_at(data + 12),
                           .k = u32_at(data + 16)};
    uint32_t scale_bits = u32_at(data + 20), zp_bits = u32_at(data + 24);
    memcpy(&p.scale, &scale_bits, sizeof p.scale);
    memcpy(&p.zero_point, &zp_bits, sizeof p.zero_point);
    size_t a_bytes = p.m * p.k * a_bytes_of[precision], b_bytes = p.k * p.n * b_bytes_of[precision];
    int dynamic = precision == ISF_BENCH_QD8 || precision == ISF_BENCH_QC4W;
    size_t scales_bytes = dynamic ? p.n * sizeof(float) : 0, bias_bytes = p.n * bias_bytes_of[precision];
    size_t extra_bytes = bias_bytes_of[precision] ? scales_bytes + bias_bytes + 2 * sizeof(float) : 0;
    if (p.m == 0 || p.n == 0 || p.k == 0 || size != HEADER_BYTES + a_bytes + b_bytes + extra_bytes) {
        return usage("the input's size does not match its m, n, k and the precision");
    }
    p.a = aligned_copy(data + HEADER_BYTES, a_bytes);
    p.b = aligned_copy(data + HEADER_BYTES + a_bytes, b_bytes);
    if (extra_bytes) {
        const unsigned char *extra = data + HEADER_BYTES + a_bytes + b_bytes;
        p.w_scales = dynamic ? aligned_copy(extra, scales_bytes) : NULL;
        p.bias = aligned_copy(extra + scales_bytes, bias_bytes);
        memcpy(&p.out_min, extra + scales_bytes + bias_bytes, sizeof p.out_min);
        memcpy(&p.out_max, extra + scales_bytes + bias_bytes + sizeof p.out_min, sizeof p.out_max);
        if ((dynamic && p.w_scales == NULL) || p.bias == NULL) {
            fprintf(stderr, "%s harness: out of memory\n", isf_bench_library);
            return 1;
        }
    }
    isf_bench_element element = isf_bench_output((isf_bench_precision)precision);
    size_t c_bytes = p.m * p.n * element_bytes(element);
    unsigned char *cbuf = aligned_alloc(ALIGN, (GUARD + c_bytes + GUARD + ALIGN - 1) / ALIGN * ALIGN);
    void *warm = aligned_alloc(ALIGN, (p.n * element_bytes(element) + ALIGN - 1) / ALIGN * ALIGN);
    if (p.a == NULL || p.b == NULL || cbuf == NULL || warm == NULL) {
        fprintf(stderr, "%s harness: out of memory\n", isf_bench_library);
        return 1;
    }
    void *state = NULL;
    int32_t status = isf_bench_prepare(&p, &state);
    if (status == 0) {
        status = isf_bench_call(state, &p, 1, p.a, warm);
    }
    /* After the warm-up: an element the measured call never writes keeps 0xA5 bytes, which the oracle sees. */
    memset(cbuf, SENTINEL, GUARD + c_bytes + GUARD);
    if (status == 0) {
        isf_bench_begin();
        status = isf_bench_call(state, &p, p.m, p.a, cbuf + GUARD);
        isf_bench_end();
        /* The tests of the checks themselves: the guard check must see one byte written past C, an exact oracle one
         * step off in C. */
        const char *selftest = getenv("ISF_BENCH_SELFTEST");
        if (selftest != NULL && strcmp(selftest, "guard") == 0) {
            cbuf[GUARD + c_bytes] ^= 1;
        } else if (selftest != NULL && strcmp(selftest, "c") == 0) {
            cbuf[GUARD] ^= 1;
        }
    }
    uint32_t intact = (uint32_t)guards_intact(cbuf, c_bytes), code = (uint32_t)element;
    char detail[200] = "";
    if (status == 0) {
        isf_bench_describe(state, &p, detail, sizeof detail);
    }
    isf_bench_release(state);
    FILE *out = fopen(argv[4], "wb");
    if (out == NULL || fwrite(&status, 4, 1, out) != 1 || fwrite(&code, 4, 1, out) != 1 ||
        fwrite(cbuf + GUARD, 1, c_bytes, out) != c_bytes || fwrite(&intact, 4, 1, out) != 1 || fclose(out) != 0) {
        fprintf(stderr, "%s harness: cannot write %s\n", isf_bench_library, argv[4]);
        return 1;
    }
    printf("%s %s\n", isf_bench_library, detail);
    return 0;
}
