/* Pre-packed B as stored bytes: packed into a file by one process, mapped back and used by another (possibly under
 * another CPU model, cap or SVE vector length), and refused when damaged. C sits between guard bytes in a guarded
 * mapping: a result must be exact (small integers, every precision) with nothing written outside C's m×n window; a
 * refusal must leave every byte as it was.
 *
 * Usage: test_packed_file pack FILE OP [MASK]     pack B of op OP (0-3) under feature mask MASK into FILE
 *        test_packed_file use FILE OP EXPECT       map FILE, run isf_gemm_packed; EXPECT: ok | unsupported | invalid
 *        test_packed_file [self]                   every op: a round trip through a file, each damaged header field,
 *                                                  buffers shorter than the panels' end
 * Exit status: the number of failed checks (2 on bad use). */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "isf_internal.h"

enum { M = 13, N = 37, K = 300, LDC = N + 3, GUARD = 256, SENTINEL = 0xA5 };

/* C with GUARD sentinel bytes before and after its M×LDC block, ending at a PROT_NONE page. */
typedef struct {
    guarded g;
    unsigned char *block;
    size_t bytes;
} guarded_c;

static unsigned char *c_open(guarded_c *c, isf_op op) {
    c->bytes = (size_t)M * LDC * isf_ops[op].out_bytes;
    unsigned char *p = guarded_alloc(&c->g, GUARD + c->bytes + GUARD, 0);
    if (p == NULL) {
        return NULL;
    }
    memset(p, SENTINEL, GUARD + c->bytes + GUARD);
    c->block = p + GUARD;
    return c->block;
}

/* Every byte outside the M×N window (guards, the LDC padding of each row) still the sentinel. */
static int outside_untouched(const guarded_c *c, isf_op op) {
    size_t out = isf_ops[op].out_bytes, row = (size_t)LDC * out, used = (size_t)N * out;
    int ok = all_bytes(c->block - GUARD, GUARD, SENTINEL) && all_bytes(c->block + c->bytes, GUARD, SENTINEL);
    for (size_t r = 0; r < M; r++) {
        ok &= all_bytes(c->block + r * row + used, row - used, SENTINEL);
    }
    return ok;
}

static void *a_operand(isf_op op) {
    void *a = malloc((size_t)M * K * isf_ops[op].in_bytes);
    fill_matrix(op, a, M, K, K, 1);
    return a;
}

/* B packed under the current cap into a 64-byte-aligned buffer of *bytes. */
static unsigned char *pack(isf_op op, size_t *bytes) {
    void *b = malloc((size_t)K * N * isf_ops[op].in_bytes);
    fill_matrix(op, b, K, N, N, 2);
    *bytes = isf_packed_b_size(op, N, K);
    unsigned char *packed = aligned_alloc(64, (*bytes + 63) / 64 * 64);
    CHECK(*bytes > 0 && packed != NULL && isf_pack_b(op, N, K, b, N, packed, *bytes) == ISF_OK);
    free(b);
    return packed;
}

static int write_file(const char *path, const void *data, size_t bytes) {
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && fwrite(data, 1, bytes, f) == bytes;
    return (f == NULL || fclose(f) == 0) && ok;
}

/* The file mapped read-only from offset 0 (page-aligned: the panels stay 64-byte aligned). */
static const unsigned char *map_file(const char *path, size_t *bytes) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        return NULL;
    }
    *bytes = (size_t)st.st_size;
    void *p = mmap(NULL, *bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* isf_gemm_packed on `bytes` of `packed`: the status, checked against `expect` with C exact or untouched; `what`
 * names the case in failure messages. */
static void use(isf_op op, const void *packed, size_t bytes, isf_status expect, const char *what) {
    guarded_c c;
    if (c_open(&c, op) == NULL) {
        CHECK(!"guarded C");
        return;
    }
    void *a = a_operand(op);
    int before = failures;
    isf_status st = isf_gemm_packed(op, M, N, K, a, K, packed, bytes, c.block, LDC);
    CHECK(st == expect);
    if (st == ISF_OK) {
        CHECK(product_is_exact(op, M, N, K, c.block, LDC) && outside_untouched(&c, op));
    } else {
        CHECK(all_bytes(c.block - GUARD, GUARD + c.bytes + GUARD, SENTINEL));
    }
    if (failures != before) {
        fprintf(stderr, "  op %d, %s: isf_gemm_packed gave %d, expected %d\n", (int)op, what, (int)st, (int)expect);
    }
    guarded_free(&c.g);
    free(a);
}

/* ---- damaged headers: each field of isaforge.h's format, in a copy of a good buffer --------------------------- */

/* Another layout of `op` than `layout` that a kernel runnable now reads, or `layout` itself if there is none. */
static uint32_t other_layout(isf_op op, uint32_t layout) {
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        const isf_kernel *k = &isf_kernel_table[i];
        if (k->op == op && k->layout.id != layout && (k->required & ~isf_active_features()) == 0) {
            return k->layout.id;
        }
    }
    return layout;
}

typedef struct {
    const char *what;
    size_t at, width; /* 4 or 8 bytes */
    uint64_t value;   /* written as is */
    int add;          /* 1: value is added to the field instead */
} damage;

static void apply(unsigned char *p, const damage *d) {
    le_put(p + d->at, d->add ? le_get(p + d->at, d->width) + d->value : d->value, d->width);
}

/* Fields that pass every check but the checksum: a file damaged there once ran on panels of another shape. */
static void unsealed_damage_is_refused(isf_op op, const unsigned char *good, size_t bytes) {
    const isf_kernel *kern = isf_selected_kernel(op);
    uint32_t layout = (uint32_t)le_get(good + PACKED_LAYOUT, 4);
    const damage cases[] = {
        {"Kc another whole number of k blocks", 40, 8, 2 * kern->kr, 1},
        {"another layout runnable here", 12, 4, other_layout(op, layout), 0},
        {"panel offset 8 bytes on", 48, 8, 8, 1},
        {"the checksum", PACKED_CHECKSUM, 8, 1, 1},
    };
    unsigned char *copy = aligned_alloc(64, (bytes + 63) / 64 * 64);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(copy, good, bytes);
        apply(copy, &cases[i]);
        if (le_get(copy + PACKED_LAYOUT, 4) == layout && cases[i].at == 12) {
            continue; /* no other layout runnable here */
        }
        use(op, copy, bytes, ISF_ERR_INVALID_ARG, cases[i].what);
    }
    free(copy);
}

/* Resealed damage, each refused by its own check. */
static void damaged_headers(isf_op op, const unsigned char *good, size_t bytes) {
    const damage cases[] = {
        {"magic", 0, 4, 0x42465358u, 0},
        {"version", 4, 4, ISF_PACKED_B_VERSION + 1, 0},
        {"op", 8, 4, (uint32_t)(op + 1) % ISF_OP_COUNT, 0},
        {"op out of range", 8, 4, 77, 0},
        {"padding after the vector length", 20, 4, 1, 0},
        {"n", 24, 8, 1, 1},
        {"k", 32, 8, 1, 1},
        {"Kc zero", 40, 8, 0, 0},
        {"Kc not whole k blocks", 40, 8, 1, 1},
        {"Kc above the ceiling", 40, 8, (uint64_t)1 << 40, 0},
        {"panel offset before the header's end", 48, 8, 8, 0},
        {"panel offset past the first boundary", 48, 8, 128, 0},
    };
    unsigned char *copy = aligned_alloc(64, (bytes + 63) / 64 * 64);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const damage *d = &cases[i];
        memcpy(copy, good, bytes);
        apply(copy, d);
        reseal_packed(copy);
        if (d->add && d->at == 40 && isf_selected_kernel(op)->kr == 1) {
            continue; /* KR = 1: every Kc is a whole number of k blocks */
        }
        use(op, copy, bytes, ISF_ERR_INVALID_ARG, d->what);
    }
    free(copy);
}

/* The panels' end from the buffer's start, as the reading kernel sees the header (the tile width n chose, which may
 * not be the selected kernel's). */
static size_t extent_of(isf_op op, const unsigned char *packed) {
    isf_packed_header h;
    isf_sizes s;
    int ok = isf_packed_header_read(packed, &h) && h.op == (uint32_t)op;
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel *reader = ok ? isf_packed_reader(&h, sel, NULL) : NULL;
    ok = reader != NULL && isf_sizes_of(reader, &h, NULL, &s);
    isf_selection_leave(sel);
    CHECK(ok);
    return ok ? s.extent : 0;
}

/* The buffer at the end of a guarded mapping, `bytes` long: the panels' end runs exactly, without reading past it;
 * a byte less, a header's worth less or nothing, refused (the header unread below 64 bytes). A resealed header whose
 * panels would end past the buffer (the offset 8 bytes on) is refused too. */
static void short_buffers_are_refused(isf_op op, const unsigned char *good) {
    size_t extent = extent_of(op, good);
    guarded g;
    unsigned char *p = extent ? guarded_alloc(&g, extent, 0) : NULL;
    if (p == NULL) {
        CHECK(!"guarded packed buffer");
        return;
    }
    memcpy(p, good, extent);
    use(op, p, extent, ISF_OK, "exactly the panels' end");
    use(op, p, extent - 1, ISF_ERR_INVALID_ARG, "a byte short of the panels' end");
    use(op, p + extent - 63, 63, ISF_ERR_INVALID_ARG, "63 bytes");
    use(op, p + extent, 0, ISF_ERR_INVALID_ARG, "0 bytes");
    le_put(p + PACKED_PANELS, le_get(p + PACKED_PANELS, 8) + 8, 8);
    reseal_packed(p);
    use(op, p, extent, ISF_ERR_INVALID_ARG, "panels 8 bytes on, resealed");
    guarded_free(&g);
}

static void self_test(const char *dir) {
    for (int op = 0; op < (int)isf_op_count; op++) {
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops run through plans only */
        }
        size_t bytes;
        unsigned char *packed = pack((isf_op)op, &bytes);
        char path[512];
        snprintf(path, sizeof path, "%s/packed_b_%d.bin", dir, op);
        CHECK(write_file(path, packed, bytes));
        size_t mapped_bytes = 0;
        const unsigned char *mapped = map_file(path, &mapped_bytes);
        CHECK(mapped != NULL && mapped_bytes == bytes);
        if (mapped != NULL) {
            use((isf_op)op, mapped, mapped_bytes, ISF_OK, "mapped back from a file");
            munmap((void *)mapped, mapped_bytes);
        }
        remove(path);
        damaged_headers((isf_op)op, packed, bytes);
        unsealed_damage_is_refused((isf_op)op, packed, bytes);
        short_buffers_are_refused((isf_op)op, packed);
        free(packed);
    }
}

static isf_status expected(const char *word) {
    return !strcmp(word, "ok") ? ISF_OK : !strcmp(word, "unsupported") ? ISF_ERR_UNSUPPORTED : ISF_ERR_INVALID_ARG;
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "pack")) {
        isf_set_feature_mask(argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : UINT32_MAX);
        size_t bytes;
        unsigned char *packed = pack((isf_op)atoi(argv[3]), &bytes);
        CHECK(write_file(argv[2], packed, bytes));
        printf("packed for %s\n", isf_kernel_name((isf_op)atoi(argv[3])));
        free(packed);
    } else if (argc == 5 && !strcmp(argv[1], "use")) {
        size_t bytes = 0;
        const unsigned char *mapped = map_file(argv[2], &bytes);
        CHECK(mapped != NULL);
        if (mapped != NULL) {
            use((isf_op)atoi(argv[3]), mapped, bytes, expected(argv[4]), argv[2]);
        }
    } else if (argc == 1 || (argc == 2 && !strcmp(argv[1], "self"))) {
        const char *dir = getenv("TMPDIR");
        self_test(dir ? dir : "/tmp");
    } else {
        fprintf(stderr, "usage: test_packed_file [self] | pack FILE OP [MASK] | use FILE OP ok|unsupported|invalid\n");
        return 2;
    }
    return finish();
}
