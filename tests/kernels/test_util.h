/* What the C test programs share: a CHECK that counts failures (the exit status; `meson test` and pytest read it),
 * operands of any op filled with small integers so every precision computes them exactly, and buffers that end at
 * (and start after) an inaccessible page, so a read or write past either end faults. */
#ifndef ISAFORGE_TEST_UTIL_H
#define ISAFORGE_TEST_UTIL_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "isf_elements.h"

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static inline int finish(void) {
    printf("%d failed\n", failures);
    return failures != 0;
}

/* ---- guarded buffers ------------------------------------------------------------------------------------------ */

typedef struct {
    unsigned char *map, *data;
    size_t map_bytes;
} guarded;

/* `bytes` usable bytes whose last byte is followed by a PROT_NONE page, with one before the mapping too. With
 * `noreserve`, pages are only backed when touched (operands of 2^28 elements on a 32-bit target). NULL on failure. */
static inline unsigned char *guarded_alloc(guarded *g, size_t bytes, int noreserve) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + page - 1) / page * page;
    g->map_bytes = body + 2 * page;
    g->map = mmap(NULL, g->map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0), -1, 0);
    if (g->map == MAP_FAILED) {
        g->map = g->data = NULL;
        return NULL;
    }
    if (mprotect(g->map + page, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(g->map, g->map_bytes);
        g->map = g->data = NULL;
        return NULL;
    }
    g->data = g->map + page + body - bytes;
    return g->data;
}

static inline void guarded_free(guarded *g) {
    if (g->map != NULL) {
        munmap(g->map, g->map_bytes);
    }
}

/* ---- operands of any op ------------------------------------------------------------------------------------------ */

/* A small integer for element (i, j): products and sums of k ≤ 64 of them stay exact in binary16 (below 2048). */
static inline int small_value(size_t i, size_t j, int salt) { return (int)((i * 7 + j * 3 + (size_t)salt) % 5) - 2; }

static inline void fill_matrix(isf_op op, void *buf, size_t rows, size_t cols, size_t ld, int salt) {
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = 0; j < cols; j++) {
            isf_put_input(op, buf, i * ld + j, small_value(i, j, salt));
        }
    }
}

/* 1 when C (m×n, leading dimension ldc) holds A·B for the fill_matrix operands (salts 1 and 2). */
static inline int product_is_exact(isf_op op, size_t m, size_t n, size_t k, const void *c, size_t ldc) {
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            double sum = 0;
            for (size_t p = 0; p < k; p++) {
                sum += (double)small_value(i, p, 1) * small_value(p, j, 2);
            }
            if (isf_get_output(op, c, i * ldc + j) != sum) {
                return 0;
            }
        }
    }
    return 1;
}

/* 1 when every byte of buf[0, bytes) is `fill`. */
static inline int all_bytes(const void *buf, size_t bytes, unsigned char fill) {
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++) {
        if (p[i] != fill) {
            return 0;
        }
    }
    return 1;
}

/* ---- exported plans, crafted (plan_file.c's export format: a 64-byte header, the packed-B buffer, then the bias or the
 * quantized ops' section) ----------------------------------------------------------------------------------------- */

enum {
    PLAN_HEADER = 64, /* the packed-B buffer starts here */
    PLAN_OP = 8,
    PLAN_TILE_ROWS = 16,
    PLAN_TILE_COLS = 20,
    PLAN_PACKED_BYTES = 24,
    PLAN_CHECKSUM = 32,
    PLAN_BIAS_BYTES = 40,
    PLAN_QUANT_BYTES = 56,
    PACKED_LAYOUT = 12, /* isaforge.h's packed-B header */
    PACKED_N = 24,
    PACKED_K = 32,
    PACKED_KC = 40,
    PACKED_PANELS = 48,
    PACKED_CHECKSUM = 56, /* of the 56 bytes before it (format version 2) */
    QUANT_PADDED = 16,    /* the quantized section: scalars, then NR-padded arrays (bias, sums, scales, fp32 bias) */
    QUANT_BLOCKS = 24,
    QUANT_ARRAYS = 32,
};

static inline uint64_t le_get(const unsigned char *p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

static inline void le_put(unsigned char *p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static inline uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        h = (h ^ p[i]) * 0x100000001b3u;
    }
    return h;
}

/* The plan's checksum again after a test changed its fields: what a crafted file carries, so that the import's
 * other checks are the ones that must refuse it. */
static inline void reseal_plan(unsigned char *p) {
    uint64_t h = fnv1a(0xcbf29ce484222325u, p, PLAN_CHECKSUM);
    h = fnv1a(h, p + PLAN_BIAS_BYTES, PLAN_HEADER - PLAN_BIAS_BYTES);
    size_t data =
        (size_t)(le_get(p + PLAN_PACKED_BYTES, 8) + le_get(p + PLAN_BIAS_BYTES, 8) + le_get(p + PLAN_QUANT_BYTES, 8));
    le_put(p + PLAN_CHECKSUM, fnv1a(h, p + PLAN_HEADER, data), 8);
}

/* A packed-B header's checksum again (isaforge.h's FNV-1a of its first 56 bytes), as a crafted buffer would carry
 * it; in a plan export, the packed buffer's header is at p + PLAN_HEADER (reseal it before the plan). */
static inline void reseal_packed(unsigned char *p) {
    le_put(p + PACKED_CHECKSUM, fnv1a(0xcbf29ce484222325u, p, PACKED_CHECKSUM), 8);
}

/* Where a plan's quantized section starts in its export. */
static inline size_t quant_section_at(const unsigned char *p) {
    return PLAN_HEADER + (size_t)le_get(p + PLAN_PACKED_BYTES, 8) + (size_t)le_get(p + PLAN_BIAS_BYTES, 8);
}

/* The plan's export in a new malloc'd buffer (*size bytes); NULL on failure. */
static inline unsigned char *export_of(const isf_gemm *g, size_t *size) {
    *size = isf_gemm_export_size(g);
    unsigned char *p = *size ? malloc(*size) : NULL;
    if (p != NULL && isf_gemm_export(g, p, *size) != ISF_OK) {
        free(p);
        p = NULL;
    }
    return p;
}

/* isf_gemm_import of p[0, size) copied to the end of a guarded mapping, so that reading one byte past it faults; the
 * plan it may return is destroyed. */
static inline isf_status import_guarded(const unsigned char *p, size_t size) {
    guarded g;
    unsigned char *copy = guarded_alloc(&g, size, 0);
    if (copy == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    memcpy(copy, p, size);
    isf_gemm *plan = NULL;
    isf_status st = isf_gemm_import(copy, size, &plan);
    if ((st == ISF_OK) != (plan != NULL)) {
        st = ISF_ERR_NO_MEMORY; /* a plan without ISF_OK, or none with it: neither is a status the caller expects */
    }
    isf_gemm_destroy(plan);
    guarded_free(&g);
    return st;
}

#endif
