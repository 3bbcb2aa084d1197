/* A fuzz target for the two readers of untrusted bytes: isf_gemm_import (exported plans) and isf_gemm_packed (a
 * stored packed B). Built with ASan + UBSan (tests/kernels/runtime/test_fuzz.py builds the library and this program
 * with b_sanitize=address,undefined) and run under QEMU, so the real Arm kernels read what the mutations craft.
 *
 *   fuzz_plan run SEED EXECS [FINDINGS]  executions 0…EXECS-1 of the deterministic campaign SEED, each batch of
 *                                        them in a child process: a child that dies (sanitizer report, signal,
 *                                        timeout, damaged guard bytes) is a finding, "fuzz: finding at exec I:
 *                                        <recipe>: <what>" after the child's own report, and the campaign goes on
 *                                        from I + 1 until FINDINGS (default 1) were made; then "fuzz: done <counts>"
 *   fuzz_plan replay RECIPE-FILE...      each file's recipe lines ("seed=<name> m=M acc=A <mutations>", as a
 *                                        finding prints them; '#' starts a comment line), each in a child:
 *                                        "fuzz: replayed <seed>: accepted | refused | refused past
 *                                        its checksums" (every checksum in it valid) or a finding line
 *   fuzz_plan seeds                      the seeds' names and sizes
 *
 * Seeds are made here, at run time, on the CPU model the campaign runs on: an export of every op (plain and
 * quantized, blockwise scales included) and a packed B of every plain op, once per runnable kernel of the op
 * (selected by name), so every layout this CPU reads is in the corpus. Execution i of campaign SEED depends only
 * on (SEED, i): a finding's recipe replays it exactly, and a campaign resumed past a finding is the uninterrupted one.
 * Mutations know the formats' fields: bit flips, 32/64-bit field overwrites with edge values (absolute, or the
 * original plus 2^28, 2^32, 2^60…), n or k moved by such a delta (n together with the quantized section's padded n,
 * so that wrapped section sizes still match), other layouts' ids, edge floats in the quantized arrays, a section
 * declared shorter with the buffer cut there, truncation and extension; then, mostly (7 in 8, each), the packed-B
 * header's checksum and the plan's made valid again so that the readers get past them to the checks behind. An
 * imported plan is run (small m, C with guard bytes around every row), exported, imported again and destroyed. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

enum {
    MAX_SEEDS = 512,
    EXTEND_MAX = 256,
    INPUT_MAX = (1 << 20) + 4 * EXTEND_MAX,
    GUARD = 64, /* guard bytes before and after C, and GUARD_COLS elements after each row */
    GUARD_COLS = 3,
    GUARD_FILL = 0xA5,
    RUN_N_MAX = 4096,     /* above: only the first tile of one row runs (C of one tile, when it is no wider) */
    RUN_K_MAX = 1u << 16, /* above: no run (A of k elements) */
    EXPORT_MAX = 64u << 20,
    EXEC_SECONDS = 20,  /* one execution under QEMU and ASan: a hang past this is a finding */
    EXIT_REPORTED = 86, /* a child that printed its own finding line */
};

/* The formats' offsets (plan export version 4, packed-B version 2) are test_util.h's: PLAN_*, PACKED_*, QUANT_*. */

typedef struct {
    uint16_t offset, width;
} field;

static const field plan_fields[] = {{0, 4},  {4, 4},  {8, 4},  {12, 4}, {16, 4}, {20, 4},
                                    {24, 8}, {32, 8}, {40, 8}, {48, 4}, {52, 4}, {56, 8}};
static const field packed_fields[] = {{0, 4},  {4, 4},  {8, 4},  {12, 4}, {16, 4}, {20, 4},
                                      {24, 8}, {32, 8}, {40, 8}, {48, 8}, {56, 8}};
static const field quant_fields[] = {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {16, 8}, {24, 8}};

typedef struct {
    char name[96];
    int packed; /* 1: a packed B for isf_gemm_packed; 0: a plan export for isf_gemm_import */
    isf_op op;
    size_t n, k; /* what the caller of isf_gemm_packed passes (the seed's) */
    unsigned char *bytes;
    size_t size;
} seed;

static seed seeds[MAX_SEEDS];
static size_t seed_count;
static uint32_t layouts[MAX_SEEDS]; /* every layout id of the corpus: ids another kernel reads */
static size_t layout_count;

/* ---- deterministic randomness ---------------------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t next_random(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static size_t below(size_t bound) { return bound ? (size_t)(next_random() % bound) : 0; }

/* ---- seeds ------------------------------------------------------------------------------------------------------ */

static int pattern(size_t i) { return (int)(i * 7 % 5) - 2; }

/* W[n][k] of the op's weight type: small integers, int4 two per byte. */
static void fill_weights(isf_op op, unsigned char *w, size_t n, size_t k) {
    const isf_op_info *info = &isf_ops[op];
    size_t elements = n * k;
    if (info->w_bits == 4) {
        for (size_t e = 0; e < (elements + 1) / 2; e++) {
            w[e] = (unsigned char)((pattern(2 * e) & 0xF) | (pattern(2 * e + 1) & 0xF) << 4);
        }
    } else if (info->quantized) {
        for (size_t e = 0; e < elements; e++) {
            w[e] = (unsigned char)pattern(e);
        }
    } else {
        fill_matrix(op, w, n, k, k, 2);
    }
}

static void fill_bias(isf_op op, unsigned char *bias, size_t n) {
    int float_bias = isf_ops[op].quantized && isf_ops[op].in_kind == ISF_ELEM_FLOAT;
    for (size_t j = 0; j < n; j++) {
        if (!isf_ops[op].quantized) {
            isf_put_output(op, bias, j, pattern(j + 1));
        } else if (float_bias) {
            ((float *)(void *)bias)[j] = (float)pattern(j + 1) * 0.5f;
        } else {
            ((int32_t *)(void *)bias)[j] = pattern(j + 1) * 100;
        }
    }
}

static void add_seed(const char *name, int packed, isf_op op, size_t n, size_t k, const void *bytes, size_t size) {
    if (seed_count == MAX_SEEDS) {
        return;
    }
    seed *s = &seeds[seed_count];
    s->bytes = malloc(size);
    if (s->bytes == NULL) {
        return;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    memcpy(s->bytes, bytes, size);
    s->packed = packed, s->op = op, s->n = n, s->k = k, s->size = size;
    seed_count++;
    uint32_t layout = (uint32_t)le_get(s->bytes + (packed ? 0 : PLAN_HEADER) + PACKED_LAYOUT, 4);
    for (size_t i = 0; i < layout_count; i++) {
        if (layouts[i] == layout) {
            return;
        }
    }
    layouts[layout_count++] = layout;
}

typedef struct {
    const char *tag;
    size_t n, k, w_block; /* w_block: gemm_qd8_f32_qc4w's blockwise scales */
    int bias;
} shape;

static const shape shapes[] = {
    {"37x29", 37, 29, 0, 1}, {"20x300", 20, 300, 0, 0}, {"5x0", 5, 0, 0, 1}, {"9x70b32", 9, 70, 32, 1}};

static void export_seed(const char *kernel, const isf_gemm_desc *d, const char *tag) {
    isf_gemm *g = NULL;
    if (isf_gemm_create(d, &g) != ISF_OK) {
        return;
    }
    size_t size = isf_gemm_export_size(g);
    unsigned char *bytes = malloc(size);
    char name[96];
    snprintf(name, sizeof name, "plan:%s:%s:%s", isf_op_name(d->op), kernel, tag);
    if (bytes != NULL && isf_gemm_export(g, bytes, size) == ISF_OK) {
        add_seed(name, 0, d->op, d->n, d->k, bytes, size);
    }
    free(bytes);
    isf_gemm_destroy(g);
}

static void plan_seeds(isf_op op, const char *kernel) {
    static _Alignas(16) unsigned char w[20 * 300 * 4], bias[64 * 4];
    static float scales[64 * 3];
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
        scales[i] = 0.01f * (float)(i % 7 + 1);
    }
    int quantized = isf_ops[op].quantized, int4_scales = isf_ops[op].w_bits == 4 && quantized;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const shape *sh = &shapes[s];
        if (sh->w_block && !int4_scales) {
            continue;
        }
        fill_weights(op, w, sh->n, sh->k);
        fill_bias(op, bias, sh->n);
        size_t blocks = sh->w_block ? (sh->k + sh->w_block - 1) / sh->w_block : 1;
        isf_quant_params q = {.a_scale = 0.5f,
                              .a_zero_point = 3,
                              .w_scales = scales,
                              .w_scale_count = sh->n * blocks,
                              .c_scale = 0.25f,
                              .c_zero_point = -2,
                              .w_block = sh->w_block};
        int int_out = isf_ops[op].out_kind == ISF_ELEM_INT && op != ISF_OP_GEMM_QS8;
        isf_gemm_desc d = {.op = op,
                           .n = sh->n,
                           .k = sh->k,
                           .weights = w,
                           .ldw = sh->k,
                           .layout = ISF_WEIGHTS_NK,
                           .bias = sh->bias ? bias : NULL,
                           .flags = int_out ? 0u : ISF_GEMM_CLAMP,
                           .out_min = -100.0f,
                           .out_max = 100.0f,
                           .quant = quantized ? &q : NULL};
        export_seed(kernel, &d, sh->tag);
    }
}

static void packed_seeds(isf_op op, const char *kernel) {
    static _Alignas(16) unsigned char b[300 * 37 * 4];
    for (size_t s = 0; s < 3; s++) { /* the plain shapes */
        size_t n = shapes[s].n, k = shapes[s].k, size = isf_packed_b_size(op, n, k);
        unsigned char *packed = size ? aligned_alloc(64, (size + 63) / 64 * 64) : NULL;
        fill_matrix(op, b, k, n, n, 2);
        char name[96];
        snprintf(name, sizeof name, "packed:%s:%s:%s", isf_op_name(op), kernel, shapes[s].tag);
        if (packed != NULL && isf_pack_b(op, n, k, b, n, packed, size) == ISF_OK) {
            add_seed(name, 1, op, n, k, packed, size);
        }
        free(packed);
    }
}

/* The seeds of every runnable kernel of every op (or only those of kernel `only`), each kernel selected by name. */
static void make_seeds(const char *only) {
    for (int op = 0; op < ISF_OP_COUNT; op++) {
        for (size_t i = 0; i < isf_kernel_count((isf_op)op); i++) {
            isf_kernel_desc kd;
            if (isf_kernel_info((isf_op)op, i, &kd) != ISF_OK || !kd.runnable ||
                (only != NULL && strcmp(kd.name, only) != 0) || isf_select_kernel((isf_op)op, kd.name) != ISF_OK) {
                continue;
            }
            plan_seeds((isf_op)op, kd.name);
            if (isf_packed_b_size((isf_op)op, 1, 1) != 0) {
                packed_seeds((isf_op)op, kd.name);
            }
        }
        isf_select_kernel((isf_op)op, NULL);
    }
}

static const seed *find_seed(const char *name) {
    for (size_t i = 0; i < seed_count; i++) {
        if (strcmp(seeds[i].name, name) == 0) {
            return &seeds[i];
        }
    }
    return NULL;
}

/* ---- one input: a seed and primitive mutations, each applied as it is drawn and written down as a recipe ------- */

typedef enum { P_SET, P_FLIP, P_TRUNC, P_EXTEND, P_SEALPB, P_FIXSUM } prim_kind;

typedef struct {
    const seed *from;
    unsigned char *bytes;
    size_t size;
    size_t m;
    int accumulate;
    char recipe[1024];
} input;

static void note(input *in, const char *text) {
    size_t used = strlen(in->recipe);
    snprintf(in->recipe + used, sizeof in->recipe - used, " %s", text);
}

static uint64_t mask_to(uint64_t v, unsigned width) { return width == 8 ? v : v & ((1ull << (8 * width)) - 1); }

/* Section offsets of a plan export, from its header as the seed has it (0: no quantized section). */
static size_t quant_base(const seed *s) {
    if (s->packed || le_get(s->bytes + PLAN_QUANT_BYTES, 8) == 0) {
        return 0;
    }
    return PLAN_HEADER + (size_t)le_get(s->bytes + PLAN_PACKED_BYTES, 8) +
           (size_t)le_get(s->bytes + PLAN_BIAS_BYTES, 8);
}

/* 1 when the plan header's section sizes lie within the input: plan_file.c sums them before any other check. */
static int plan_sizes_fit(const input *in) {
    const unsigned char *p = in->bytes;
    if (in->from->packed || in->size < PLAN_HEADER) {
        return 0;
    }
    uint64_t room = in->size - PLAN_HEADER, packed = le_get(p + PLAN_PACKED_BYTES, 8);
    uint64_t bias = le_get(p + PLAN_BIAS_BYTES, 8), quant = le_get(p + PLAN_QUANT_BYTES, 8);
    return packed <= room && bias <= room - packed && quant <= room - packed - bias;
}

/* Where the input's packed-B header is (the whole input, or a plan's packed section), NULL when it is not all there
 * (the readers refuse that before they read it). */
static unsigned char *packed_header_of(const input *in) {
    if (in->from->packed) {
        return in->size >= PLAN_HEADER ? in->bytes : NULL;
    }
    return plan_sizes_fit(in) && le_get(in->bytes + PLAN_PACKED_BYTES, 8) >= PLAN_HEADER ? in->bytes + PLAN_HEADER
                                                                                         : NULL;
}

/* 1 when every checksum the input carries is valid: a reader that refuses it refuses it past its checksums. */
static int sealed(const input *in) {
    const unsigned char *h = packed_header_of(in);
    if (h == NULL || le_get(h + PACKED_CHECKSUM, 8) != fnv1a(0xcbf29ce484222325u, h, PACKED_CHECKSUM)) {
        return 0;
    }
    if (in->from->packed) {
        return 1;
    }
    uint64_t sum = le_get(in->bytes + PLAN_CHECKSUM, 8);
    reseal_plan(in->bytes);
    int valid = sum == le_get(in->bytes + PLAN_CHECKSUM, 8);
    le_put(in->bytes + PLAN_CHECKSUM, sum, 8);
    return valid;
}

/* The recipe's words: set:OFFSET:WIDTH:VALUE flip:OFFSET:BIT trunc:SIZE extend:COUNT:BYTE, then sealpb (the packed-B
 * header's checksum made valid again) and fixsum (the plan's), each where its reader would sum what it covers. */
static void apply(input *in, prim_kind kind, uint64_t a, uint64_t b, uint64_t c) {
    char text[80];
    switch (kind) {
    case P_SET:
        c = mask_to(c, (unsigned)b);
        if (a + b <= in->size) {
            le_put(in->bytes + a, c, (size_t)b);
        }
        snprintf(text, sizeof text, "set:%" PRIu64 ":%" PRIu64 ":0x%" PRIx64, a, b, c);
        break;
    case P_FLIP:
        if (a < in->size) {
            in->bytes[a] ^= (unsigned char)(1u << (b & 7));
        }
        snprintf(text, sizeof text, "flip:%" PRIu64 ":%" PRIu64, a, b & 7);
        break;
    case P_TRUNC:
        in->size = a < in->size ? (size_t)a : in->size;
        snprintf(text, sizeof text, "trunc:%" PRIu64, a);
        break;
    case P_EXTEND:
        a = a < EXTEND_MAX && a <= INPUT_MAX - in->size ? a : 0;
        memset(in->bytes + in->size, (int)(b & 0xFF), (size_t)a);
        in->size += (size_t)a;
        snprintf(text, sizeof text, "extend:%" PRIu64 ":%" PRIu64, a, b & 0xFF);
        break;
    case P_SEALPB:
        if (packed_header_of(in) != NULL) {
            reseal_packed(packed_header_of(in));
        }
        snprintf(text, sizeof text, "sealpb");
        break;
    case P_FIXSUM:
        if (plan_sizes_fit(in)) {
            reseal_plan(in->bytes);
        }
        snprintf(text, sizeof text, "fixsum");
        break;
    }
    note(in, text);
}

static void start_input(input *in, const seed *s, size_t m, int accumulate) {
    static unsigned char buffer[INPUT_MAX];
    in->from = s, in->bytes = buffer, in->size = s->size < 1u << 20 ? s->size : 1u << 20;
    memcpy(buffer, s->bytes, in->size);
    in->m = m, in->accumulate = accumulate;
    snprintf(in->recipe, sizeof in->recipe, "seed=%s m=%zu acc=%d", s->name, m, accumulate);
}

/* ---- mutations -------------------------------------------------------------------------------------------------- */

/* Sizes and counts at the edges, a row per kind: small ones, around 2^28 and 2^32 (32-bit wraps), 2^60 and up. */
/* clang-format off */
static const uint64_t edges[] = {
    0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256, 4096, 65535, 65536, 65537,
    1u << 28, (1u << 28) + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 1ull << 32, (1ull << 32) + 1,
    1ull << 60, 1ull << 62, 1ull << 63, UINT64_MAX,
};
/* clang-format on */
/* Added to a size, they wrap a 32-bit size_t (2^28 · 16, 2^32) or a 64-bit product (2^60 · 16, 2^62 · 4). */
static const uint64_t deltas[] = {1u << 28, 1u << 30, 1u << 31, 1ull << 32, 1ull << 60, 1ull << 62, 1ull << 63};
#define COUNT(a) (sizeof(a) / sizeof *(a))

static uint64_t edge_value(uint64_t orig) {
    switch (below(5)) {
    case 0:
    case 1:
        return edges[below(COUNT(edges))];
    case 2:
    case 3:
        return orig + deltas[below(COUNT(deltas))];
    default: {
        const uint64_t near[] = {orig + 1, orig - 1, orig * 2, orig / 2};
        return near[below(COUNT(near))];
    }
    }
}

static field pick_field(const input *in) {
    const seed *s = in->from;
    size_t q = quant_base(s), which = below(q ? 3 : 2);
    if (s->packed) {
        return packed_fields[below(COUNT(packed_fields))];
    }
    if (which == 0) {
        return plan_fields[below(COUNT(plan_fields))];
    }
    field f = which == 1 ? packed_fields[below(COUNT(packed_fields))] : quant_fields[below(COUNT(quant_fields))];
    f.offset = (uint16_t)(f.offset + (which == 1 ? PLAN_HEADER : q));
    return f;
}

static void mutate_field(input *in) {
    field f = pick_field(in);
    uint64_t orig = f.offset + f.width <= in->size ? le_get(in->bytes + f.offset, f.width) : 0;
    apply(in, P_SET, f.offset, f.width, edge_value(orig));
}

/* n or k moved by a wrapping delta; with n, a quantized section's padded n too (rounded to a divisor of the seed's
 * that could be NR), so that the section's size computed from them wraps to the size it has. */
static void move_dimension(input *in) {
    size_t base = in->from->packed ? 0 : PLAN_HEADER, q = quant_base(in->from), at = below(2) ? PACKED_N : PACKED_K;
    uint64_t n = le_get(in->bytes + base + at, 8), moved = n + deltas[below(COUNT(deltas))];
    apply(in, P_SET, base + at, 8, moved);
    if (at == PACKED_K || q == 0 || q + QUANT_ARRAYS > in->size) {
        return;
    }
    uint64_t padded = le_get(in->bytes + q + QUANT_PADDED, 8), nr = padded, tries = 0;
    for (uint64_t d = padded > n ? padded - n + 1 : 1; d <= padded && padded <= 4096; d++) {
        nr = padded % d == 0 && below(++tries) == 0 ? d : nr; /* a uniform divisor, drawn on the way */
    }
    apply(in, P_SET, q + QUANT_PADDED, 8, nr ? (moved + nr - 1) / nr * nr : moved);
}

/* An edge float among the quantized section's arrays: scales, bias, sums. */
static void mutate_float(input *in) {
    static const uint32_t floats[] = {0x7fc00000u, 0xffc00000u, 0x7f800000u, 0xff800000u, 0,          0x80000000u,
                                      0xbf800000u, 1,           0x00800000u, 0x7f7fffffu, 0x3f800000u};
    size_t q = quant_base(in->from);
    size_t arrays = q ? (size_t)le_get(in->from->bytes + PLAN_QUANT_BYTES, 8) - QUANT_ARRAYS : 0;
    if (arrays < 4) {
        mutate_field(in);
        return;
    }
    apply(in, P_SET, q + QUANT_ARRAYS + below(arrays / 4) * 4, 4, floats[below(COUNT(floats))]);
}

static void truncate_input(input *in) {
    const seed *s = in->from;
    size_t q = quant_base(s),
           packed_end = s->packed ? 0 : PLAN_HEADER + (size_t)le_get(s->bytes + PLAN_PACKED_BYTES, 8);
    const size_t at[] = {below(in->size),         PLAN_HEADER,
                         2 * PLAN_HEADER,         packed_end,
                         q + below(QUANT_ARRAYS), in->size - 1 - below(in->size < 64 ? in->size : 64)};
    apply(in, P_TRUNC, at[below(COUNT(at))], 0, 0);
}

/* Where the header says the data ends: a section read past it is read past the buffer. */
static void truncate_to_declared(input *in) {
    const unsigned char *p = in->bytes;
    uint64_t end = PLAN_HEADER + le_get(p + PLAN_PACKED_BYTES, 8) + le_get(p + PLAN_BIAS_BYTES, 8) +
                   le_get(p + PLAN_QUANT_BYTES, 8);
    apply(in, P_TRUNC, end, 0, 0);
}

/* A plan section (packed B, bias, quantized) declared shorter than it is, and the buffer ending where the header
 * now says the data ends: every byte a reader takes past a section's declared end is then past the buffer. */
static void shrink_section(input *in) {
    static const size_t sizes[] = {PLAN_PACKED_BYTES, PLAN_BIAS_BYTES, PLAN_QUANT_BYTES};
    size_t at = sizes[below(COUNT(sizes))];
    uint64_t declared = in->size >= PLAN_HEADER ? le_get(in->bytes + at, 8) : 0;
    apply(in, P_SET, at, 8, below((size_t)(declared < 4096 ? declared : 4096)));
    truncate_to_declared(in);
}

static void mutate_once(input *in) {
    size_t base = in->from->packed ? 0 : PLAN_HEADER;
    switch (below(10)) {
    case 0:
        apply(in, P_FLIP, below(2) ? below(in->size < 160 ? in->size : 160) : below(in->size), below(8), 0);
        return;
    case 1:
    case 2:
        mutate_field(in);
        return;
    case 3:
        move_dimension(in);
        return;
    case 4:
        apply(in, P_SET, base + PACKED_LAYOUT, 4, layouts[below(layout_count)]);
        return;
    case 5:
        mutate_float(in);
        return;
    case 6:
        truncate_input(in);
        return;
    case 7:
        apply(in, P_EXTEND, 1 + below(EXTEND_MAX), below(2) ? 0 : below(256), 0);
        return;
    case 8:
        if (!in->from->packed) {
            shrink_section(in);
            return;
        }
        truncate_input(in);
        return;
    default:
        apply(in, P_SET, below(in->size), 1, below(256));
        return;
    }
}

static void generate(input *in, uint64_t campaign, uint64_t exec) {
    rng_state = campaign * 0x2545f4914f6cdd1du ^ exec * 0x9e3779b97f4a7c15u;
    const seed *s = &seeds[below(seed_count)];
    static const size_t ms[] = {1, 2, 3, 4, 5, 8, 9, 13, 65};
    start_input(in, s, ms[below(COUNT(ms))], !isf_ops[s->op].quantized && below(2));
    for (size_t i = 0, count = 1 + below(3); i < count; i++) {
        mutate_once(in);
    }
    if (!s->packed && below(4) == 0) {
        truncate_to_declared(in);
    }
    if (below(8) != 0) { /* mostly: the rest tries the checksums themselves */
        apply(in, P_SEALPB, 0, 0, 0);
    }
    if (!s->packed && below(8) != 0) {
        apply(in, P_FIXSUM, 0, 0, 0);
    }
}

/* ---- findings --------------------------------------------------------------------------------------------------- */

typedef struct {
    size_t imported, ran, packed_ran, refused;
    size_t deep_refused, packed_deep_refused; /* imports, packed runs refused with every checksum valid: past them */
} counts;

/* What a child leaves its parent (a shared mapping): the execution running and the counts so far. */
typedef struct {
    char current[1200]; /* "exec I: <recipe>" */
    uint64_t exec;
    counts totals;
} shared_state;

static shared_state *shared;

static void say(const char *what) {
    char line[1400];
    int len = snprintf(line, sizeof line, "fuzz: finding at %s: %s\n", shared->current, what);
    if (len > 0) {
        (void)!write(STDERR_FILENO, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
    }
}

static void finding(const char *what) {
    say(what);
    _exit(EXIT_REPORTED);
}

static void timed_out(int sig) {
    (void)sig;
    finding("timeout");
}

/* `body` in a child process; 1 when it returned, else its death reported as a finding (unless it reported itself). */
static int in_child(void (*body)(void *), void *arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGALRM, timed_out);
        body(arg);
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        perror("fuzz: fork");
        exit(2);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return 1;
    }
    char what[64] = "sanitizer"; /* ASan and UBSan exit with 1 after their report */
    if (WIFSIGNALED(status)) {
        snprintf(what, sizeof what, "signal %d", WTERMSIG(status));
    } else if (WEXITSTATUS(status) != 1) {
        snprintf(what, sizeof what, "exit %d", WEXITSTATUS(status));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_REPORTED) {
        say(what);
    }
    return 0;
}

/* ---- execution -------------------------------------------------------------------------------------------------- */

typedef struct {
    unsigned char *block, *c; /* GUARD bytes, rows × ldc elements, GUARD bytes */
    size_t rows, cols, ldc, out, bytes;
} guarded_c;

static const unsigned char CELL_FILL = 0x3C; /* a finite value in every element type */

/* C of rows × cols in rows of ldc elements: the cells hold CELL_FILL, everything around them GUARD_FILL. */
static int c_alloc(guarded_c *g, size_t rows, size_t cols, size_t ldc, size_t out) {
    *g = (guarded_c){.rows = rows, .cols = cols, .ldc = ldc, .out = out};
    g->bytes = 2 * GUARD + ((rows - 1) * ldc + cols) * out;
    g->block = malloc(g->bytes);
    if (g->block == NULL) {
        return 0;
    }
    memset(g->block, GUARD_FILL, g->bytes);
    g->c = g->block + GUARD;
    for (size_t i = 0; i < rows; i++) {
        memset(g->c + i * ldc * out, CELL_FILL, cols * out);
    }
    return 1;
}

/* 1 when nothing outside the cells changed (and, with `untouched`, nothing inside either). */
static int c_intact(const guarded_c *g, int untouched) {
    size_t cells_end = GUARD + ((g->rows - 1) * g->ldc + g->cols) * g->out;
    int ok = all_bytes(g->block, GUARD, GUARD_FILL) && all_bytes(g->block + cells_end, GUARD, GUARD_FILL);
    for (size_t i = 0; i < g->rows; i++) {
        const unsigned char *row = g->c + i * g->ldc * g->out;
        ok &= !untouched || all_bytes(row, g->cols * g->out, CELL_FILL);
        ok &= i + 1 == g->rows || all_bytes(row + g->cols * g->out, (g->ldc - g->cols) * g->out, GUARD_FILL);
    }
    return ok;
}

static void check_c(const guarded_c *g, isf_status st) {
    if (!c_intact(g, st != ISF_OK)) {
        finding(st != ISF_OK ? "C written by a refused call, or guard bytes damaged" : "guard bytes damaged");
    }
    free(g->block);
}

/* A of m × k with small values; NULL when k is too large to run here. */
static unsigned char *make_a(isf_op op, size_t m, size_t k) {
    size_t in = isf_ops[op].in_bytes;
    unsigned char *a = k <= RUN_K_MAX ? malloc(m * (k ? k : 1) * in) : NULL;
    if (a != NULL) {
        fill_matrix(op, a, m, k, k, 1);
    }
    return a;
}

/* The imported plan at the n and k its bytes give (as this target's size_t): all of C when n is small, else the
 * first tile of one row, which needs only one tile of C however large ldc = n is. */
static void run_plan(const isf_gemm *g, const input *in, const unsigned char *bytes) {
    isf_op op = (isf_op)le_get(bytes + PLAN_OP, 4);
    size_t n = (size_t)le_get(bytes + PLAN_HEADER + PACKED_N, 8), k = (size_t)le_get(bytes + PLAN_HEADER + PACKED_K, 8);
    size_t tile = (size_t)le_get(bytes + PLAN_TILE_COLS, 4), m = n <= RUN_N_MAX ? in->m : 1;
    size_t width = n <= RUN_N_MAX ? n : tile;
    unsigned char *a = width <= RUN_N_MAX ? make_a(op, m, k) : NULL;
    guarded_c c;
    if (a == NULL || !c_alloc(&c, m, width ? width : 1, n <= RUN_N_MAX ? n + GUARD_COLS : n, isf_ops[op].out_bytes)) {
        free(a);
        return;
    }
    uint32_t flags = in->accumulate ? ISF_ACCUMULATE : 0;
    isf_status st = n <= RUN_N_MAX ? isf_gemm_run(g, m, a, k, c.c, c.ldc, flags)
                                   : isf_gemm_run_tiles(g, 1, a, k, c.c, n, flags, 0, 1);
    shared->totals.ran += st == ISF_OK;
    check_c(&c, st);
    free(a);
}

/* Export the imported plan and import that again: what import accepted, export must write. */
static void export_again(const isf_gemm *g) {
    size_t size = isf_gemm_export_size(g);
    unsigned char *bytes = size <= EXPORT_MAX ? malloc(size) : NULL;
    if (bytes == NULL) {
        return;
    }
    if (isf_gemm_export(g, bytes, size) != ISF_OK) {
        finding("an imported plan does not export");
    }
    isf_gemm *again = NULL;
    if (isf_gemm_import(bytes, size, &again) == ISF_OK) {
        isf_gemm_destroy(again);
    }
    free(bytes);
}

static void execute_import(const input *in, const unsigned char *bytes) {
    isf_gemm *g = NULL;
    isf_status st = isf_gemm_import(bytes, in->size, &g);
    if (st != ISF_OK) {
        shared->totals.refused++;
        shared->totals.deep_refused += sealed(in);
        if (g != NULL) {
            finding("a refused import wrote *plan");
        }
        return;
    }
    shared->totals.imported++;
    run_plan(g, in, bytes);
    export_again(g);
    isf_gemm_destroy(g);
}

/* The one call of the packed-B reader, with the buffer's size (the input's: every byte past it is past the buffer). */
static isf_status gemm_packed(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *packed,
                              size_t packed_bytes, void *c, size_t ldc) {
    return isf_gemm_packed(op, m, n, k, a, lda, packed, packed_bytes, c, ldc);
}

/* The caller's own op, n and k (the seed's) against bytes that may say otherwise. */
static void execute_packed(const input *in, const unsigned char *bytes) {
    const seed *s = in->from;
    unsigned char *a = make_a(s->op, in->m, s->k);
    guarded_c c;
    if (a == NULL || !c_alloc(&c, in->m, s->n ? s->n : 1, s->n + GUARD_COLS, isf_ops[s->op].out_bytes)) {
        free(a);
        return;
    }
    isf_status st = gemm_packed(s->op, in->m, s->n, s->k, a, s->k, bytes, in->size, c.c, c.ldc);
    shared->totals.packed_ran += st == ISF_OK;
    shared->totals.refused += st != ISF_OK;
    shared->totals.packed_deep_refused += st != ISF_OK && sealed(in);
    check_c(&c, st);
    free(a);
}

/* The bytes in a buffer of exactly their size (ASan reports a read one past it), then the reader. */
static void execute(const input *in, const char *exec) {
    snprintf(shared->current, sizeof shared->current, "%s: %s", exec, in->recipe);
    unsigned char *bytes = malloc(in->size ? in->size : 1);
    if (bytes == NULL) {
        finding("no memory for the input");
    }
    memcpy(bytes, in->bytes, in->size);
    alarm(EXEC_SECONDS);
    if (in->from->packed) {
        execute_packed(in, bytes);
    } else {
        execute_import(in, bytes);
    }
    alarm(0);
    free(bytes);
}

/* ---- campaign, replay ------------------------------------------------------------------------------------------- */

/* Every seed as it is: they must all be clean, or a finding would be the seeds' own. */
static void execute_seeds(void *unused) {
    (void)unused;
    for (size_t i = 0; i < seed_count; i++) {
        input in;
        start_input(&in, &seeds[i], 3, 0);
        execute(&in, "seed");
    }
}

/* How many ops have plan seeds (packed 0) or packed-B seeds (packed 1). */
static size_t seeded_ops(int packed) {
    size_t count = 0;
    for (int op = 0; op < ISF_OP_COUNT; op++) {
        size_t i = 0;
        while (i < seed_count && !(seeds[i].op == (isf_op)op && seeds[i].packed == packed)) {
            i++;
        }
        count += i < seed_count;
    }
    return count;
}

typedef struct {
    uint64_t campaign, first, end;
} batch;

static void execute_batch(void *arg) {
    const batch *b = arg;
    for (uint64_t i = b->first; i < b->end; i++) {
        input in;
        char exec[48];
        generate(&in, b->campaign, i);
        snprintf(exec, sizeof exec, "exec %" PRIu64, i);
        shared->exec = i;
        execute(&in, exec);
    }
}

/* Executions 0…execs-1 in children, past each finding until `most` were made: 0 when none was. */
static int campaign(uint64_t campaign_seed, uint64_t execs, uint64_t most) {
    uint64_t findings = 0;
    batch b = {campaign_seed, 0, execs};
    if (!in_child(execute_seeds, NULL)) {
        return 1;
    }
    shared->totals = (counts){0}; /* the mutated executions' only */
    while (b.first < execs && findings < most) {
        if (in_child(execute_batch, &b)) {
            b.first = execs;
        } else {
            findings++, b.first = shared->exec + 1;
        }
    }
    const counts *t = &shared->totals;
    printf("fuzz: done execs=%" PRIu64 " findings=%" PRIu64 " seeds=%zu plan_ops=%zu packed_ops=%zu layouts=%zu "
           "imported=%zu ran=%zu packed_ran=%zu refused=%zu deep_refused=%zu packed_deep_refused=%zu\n",
           b.first, findings, seed_count, seeded_ops(0), seeded_ops(1), layout_count, t->imported, t->ran,
           t->packed_ran, t->refused, t->deep_refused, t->packed_deep_refused);
    return findings != 0;
}

/* One recipe word (apply's) onto the input; 0 for a word this program does not write. */
static int replay_word(input *in, const char *word) {
    uint64_t a = 0, b = 0, c = 0;
    if (sscanf(word, "set:%" SCNu64 ":%" SCNu64 ":%" SCNx64, &a, &b, &c) == 3 && (b == 1 || b == 4 || b == 8)) {
        apply(in, P_SET, a, b, c);
    } else if (sscanf(word, "flip:%" SCNu64 ":%" SCNu64, &a, &b) == 2) {
        apply(in, P_FLIP, a, b, 0);
    } else if (sscanf(word, "trunc:%" SCNu64, &a) == 1) {
        apply(in, P_TRUNC, a, 0, 0);
    } else if (sscanf(word, "extend:%" SCNu64 ":%" SCNu64, &a, &b) == 2) {
        apply(in, P_EXTEND, a, b, 0);
    } else if (strcmp(word, "sealpb") == 0) {
        apply(in, P_SEALPB, 0, 0, 0);
    } else if (strcmp(word, "fixsum") == 0) {
        apply(in, P_FIXSUM, 0, 0, 0);
    } else {
        return 0;
    }
    return 1;
}

static void execute_input(void *in) { execute(in, "replay"); }

/* "seed=NAME m=M acc=A word…", in a child: 1 for a finding or a malformed line, 2 when this CPU has no such seed
 * (another kernel). */
static int replay_line(char *line) {
    char name[96];
    size_t m = 0;
    int acc = 0, used = 0;
    if (sscanf(line, "seed=%95s m=%zu acc=%d%n", name, &m, &acc, &used) != 3 || m == 0 || m > 65) {
        return 1;
    }
    const seed *s = find_seed(name);
    char kernel[96];
    if (s == NULL && sscanf(name, "%*[^:]:%*[^:]:%95[^:]", kernel) == 1) { /* a replay makes only what it needs */
        make_seeds(kernel);
        s = find_seed(name);
    }
    if (s == NULL) {
        printf("fuzz: no seed %s here\n", name);
        return 2;
    }
    input in;
    start_input(&in, s, m, acc);
    for (char *word = strtok(line + used, " \n"); word != NULL; word = strtok(NULL, " \n")) {
        if (!replay_word(&in, word)) {
            return 1;
        }
    }
    shared->totals = (counts){0};
    if (!in_child(execute_input, &in)) {
        return 1;
    }
    const counts *t = &shared->totals;
    printf("fuzz: replayed %s: %s\n", name,
           t->deep_refused || t->packed_deep_refused ? "refused past its checksums"
           : t->refused                              ? "refused"
                                                     : "accepted");
    return 0;
}

static int replay(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1400];
    int status = f == NULL;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (line[0] != '#' && line[0] != '\n') {
            int st = replay_line(line);
            status = st > status ? st : status;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return status;
}

static int list_seeds(void) {
    for (size_t i = 0; i < seed_count; i++) {
        printf("%s %zu\n", seeds[i].name, seeds[i].size);
    }
    return seed_count == 0;
}

int main(int argc, char **argv) {
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("fuzz: mmap");
        return 2;
    }
    if (argc >= 3 && strcmp(argv[1], "replay") == 0) {
        int status = 0;
        for (int i = 2; i < argc; i++) {
            int st = replay(argv[i]);
            status = st > status ? st : status;
        }
        return status;
    }
    make_seeds(NULL);
    if (seed_count == 0) {
        fprintf(stderr, "fuzz: no seeds\n");
        return 2;
    }
    if (argc >= 4 && strcmp(argv[1], "run") == 0) {
        uint64_t most = argc > 4 ? strtoull(argv[4], NULL, 0) : 1;
        return campaign(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0), most);
    }
    if (argc == 2 && strcmp(argv[1], "seeds") == 0) {
        return list_seeds();
    }
    fprintf(stderr, "usage: fuzz_plan run SEED EXECS [FINDINGS] | replay RECIPE-FILE... | seeds\n");
    return 2;
}
