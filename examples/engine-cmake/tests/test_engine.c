/* ecm's numerical tests. Every kernel of every op, chosen by name (ecm_select_kernel) and called through the
 * dispatched function, against the reference kernel called directly, on sizes around every vector width and
 * block boundary, on random and extreme inputs; the references themselves against closed forms. A kernel the CPU
 * (or ECM_DISABLE) rules out must be refused by name. Prints one line per kernel; exits non-zero on the first wrong
 * result. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecm.h"

static int failures;

#define CHECK(cond, ...)                              \
    do {                                              \
        if (!(cond)) {                                \
            printf("ecm test: FAILED: " __VA_ARGS__); \
            putchar('\n');                            \
            failures++;                               \
            return 0;                                 \
        }                                             \
    } while (0)

static uint32_t rng_state = 0x2545f491u;

static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* -- sumsq_s8 ------------------------------------------------------------------------------------------------- */
/* Around 16/32-byte steps, and past the kernels' widening blocks (8192 x 16 and 16384 x 16 bytes) with the
 * largest squares, where a 32-bit sum would have wrapped long before. */
static const size_t SUMSQ_SIZES[] = {0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 255, 1000, 4099};
enum { SUMSQ_BIG = 2 * 16384 * 16 + 37 };

static int check_sumsq_on(const int8_t *x, size_t n, const char *what) {
    int64_t want = ecm_sumsq_s8_1x1_ref(x, n);
    int64_t got = ecm_sumsq_s8(x, n);
    CHECK(got == want, "sumsq_s8 %s n=%zu: %" PRId64 ", reference %" PRId64, what, n, got, want);
    return 1;
}

static int check_sumsq(int8_t *x) {
    for (size_t s = 0; s < sizeof SUMSQ_SIZES / sizeof *SUMSQ_SIZES; s++) {
        size_t n = SUMSQ_SIZES[s];
        for (size_t i = 0; i < n; i++) {
            x[i] = (int8_t)(rng() >> 24);
        }
        if (!check_sumsq_on(x, n, "random")) {
            return 0;
        }
        /* an odd start: no kernel may assume alignment */
        if (n > 0 && !check_sumsq_on(x + 1, n - 1, "unaligned")) {
            return 0;
        }
    }
    static const int8_t extremes[] = {-128, 127, -127};
    for (size_t e = 0; e < sizeof extremes; e++) {
        memset(x, (unsigned char)extremes[e], SUMSQ_BIG);
        int64_t square = (int64_t)extremes[e] * extremes[e];
        CHECK(ecm_sumsq_s8(x, SUMSQ_BIG) == square * SUMSQ_BIG, "sumsq_s8 of %d x %d: %" PRId64 ", want %" PRId64,
              SUMSQ_BIG, extremes[e], ecm_sumsq_s8(x, SUMSQ_BIG), square * SUMSQ_BIG);
    }
    for (size_t i = 0; i < SUMSQ_BIG; i++) {
        x[i] = (int8_t)(i & 1 ? -128 : (int8_t)(rng() >> 24));
    }
    return check_sumsq_on(x, SUMSQ_BIG, "mixed, long");
}

/* -- clamp_f16 ------------------------------------------------------------------------------------------------ */
enum {
    H_POS_ZERO = 0x0000,
    H_NEG_ZERO = 0x8000,
    H_MIN_SUB = 0x0001,
    H_MAX_SUB = 0x03ff,
    H_MIN_NORMAL = 0x0400,
    H_HALF = 0x3800,
    H_ONE = 0x3c00,
    H_SIX = 0x4600,
    H_MAX = 0x7bff,
    H_INF = 0x7c00,
    H_QNAN = 0x7e00,
    H_SNAN = 0x7c01,
    H_NEG = 0x8000, /* sign bit */
    GUARD = 16,     /* halves of 0xa5a5 on both sides of every output */
    GUARD_BITS = 0xa5a5,
};

static const uint16_t SPECIALS[] = {H_POS_ZERO,     H_NEG_ZERO,
                                    H_MIN_SUB,      H_MIN_SUB | H_NEG,
                                    H_MAX_SUB,      H_MAX_SUB | H_NEG,
                                    H_MIN_NORMAL,   H_HALF,
                                    H_ONE | H_NEG,  H_SIX,
                                    H_MAX,          H_MAX | H_NEG,
                                    H_INF,          H_INF | H_NEG,
                                    H_QNAN,         H_SNAN,
                                    H_QNAN | H_NEG, 0x4601 /* 6+ulp */,
                                    0x45ff,         0x3bff};
static const size_t CLAMP_SIZES[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 100, 1027};
static const uint16_t BOUNDS[][2] = {
    {H_POS_ZERO, H_SIX},            /* ReLU6 */
    {H_ONE | H_NEG, H_ONE},         /* hard tanh */
    {H_INF | H_NEG, H_INF},         /* nothing clamped */
    {H_HALF, H_HALF},               /* one value */
    {H_MIN_SUB | H_NEG, H_MIN_SUB}, /* subnormal bounds */
    {H_MAX | H_NEG, H_NEG_ZERO},    /* negative zero as the upper bound */
};

static int is_nan(uint16_t h) { return (h & 0x7fffu) > H_INF; }
/* The value order of non-NaN halves; both zeros are 0. */
static int order_key(uint16_t h) { return (h & H_NEG) ? -(int)(h & 0x7fffu) : (int)h; }

static int same_value(uint16_t a, uint16_t b) {
    return is_nan(a) || is_nan(b) ? is_nan(a) && is_nan(b) : order_key(a) == order_key(b);
}

static int check_clamp_on(const uint16_t *x, size_t n, uint16_t lo, uint16_t hi, int in_place) {
    static uint16_t want[1027], out[GUARD + 1027 + GUARD];
    ecm_clamp_f16_1x1_ref(x, want, n, lo, hi);
    for (size_t i = 0; i < GUARD + n + GUARD; i++) {
        out[i] = GUARD_BITS;
    }
    uint16_t *y = out + GUARD;
    if (in_place) {
        memcpy(y, x, n * sizeof *y);
        ecm_clamp_f16(y, y, n, lo, hi);
    } else {
        ecm_clamp_f16(x, y, n, lo, hi);
    }
    for (size_t i = 0; i < n; i++) {
        CHECK(same_value(y[i], want[i]),
              "clamp_f16 [%#06x, %#06x] n=%zu%s: y[%zu] = %#06x for x = %#06x, reference %#06x", lo, hi, n,
              in_place ? " in place" : "", i, y[i], x[i], want[i]);
        /* the reference's own check: inside the bounds, NaN stays NaN */
        CHECK(is_nan(x[i])
                  ? is_nan(want[i])
                  : order_key(want[i]) >= order_key(lo) && order_key(want[i]) <= order_key(hi) &&
                        (order_key(x[i]) < order_key(lo) || order_key(x[i]) > order_key(hi) || want[i] == x[i]),
              "clamp_f16 reference [%#06x, %#06x]: %#06x for x = %#06x", lo, hi, want[i], x[i]);
    }
    for (size_t i = 0; i < GUARD; i++) {
        CHECK(out[i] == GUARD_BITS && out[GUARD + n + i] == GUARD_BITS,
              "clamp_f16 n=%zu wrote outside y[0..n): guard %zu before %#06x, after %#06x", n, i, out[i],
              out[GUARD + n + i]);
    }
    return 1;
}

static int check_clamp(void) {
    static uint16_t x[1027];
    for (size_t b = 0; b < sizeof BOUNDS / sizeof *BOUNDS; b++) {
        for (size_t s = 0; s < sizeof CLAMP_SIZES / sizeof *CLAMP_SIZES; s++) {
            size_t n = CLAMP_SIZES[s];
            for (size_t i = 0; i < n; i++) {
                /* every special value in every lane position, random bits in between */
                x[i] = i % 3 == 0 ? SPECIALS[(i / 3 + s) % (sizeof SPECIALS / sizeof *SPECIALS)] : (uint16_t)rng();
            }
            if (!check_clamp_on(x, n, BOUNDS[b][0], BOUNDS[b][1], 0) ||
                !check_clamp_on(x, n, BOUNDS[b][0], BOUNDS[b][1], 1)) {
                return 0;
            }
        }
    }
    return 1;
}

/* -- every kernel by name ------------------------------------------------------------------------------------- */
static int check_op(ecm_op op, int8_t *scratch) { return op == ECM_OP_SUMSQ_S8 ? check_sumsq(scratch) : check_clamp(); }

static int check_kernels(ecm_op op, int8_t *scratch) {
    const char *automatic = ecm_kernel_name(op);
    const char *first_runnable = NULL;
    int ran = 0;
    for (size_t i = 0; i < ecm_kernel_count(op); i++) {
        isf_kernel_desc k;
        CHECK(ecm_kernel_info(op, i, &k) == ISF_OK, "%s: no kernel_info %zu", ecm_op_name(op), i);
        isf_status selected = ecm_select_kernel(op, k.name);
        if (!k.runnable) {
            CHECK(selected == ISF_ERR_UNSUPPORTED, "%s: selecting %s, which this CPU cannot run, gave %d",
                  ecm_op_name(op), k.name, (int)selected);
            printf("ecm test: %s %s: refused (needs features %#" PRIx32 ", active %#" PRIx32 ")\n", ecm_op_name(op),
                   k.name, k.required, ecm_active_features());
            continue;
        }
        first_runnable = first_runnable ? first_runnable : k.name;
        CHECK(selected == ISF_OK && strcmp(ecm_kernel_name(op), k.name) == 0, "%s: selecting %s gave %d, runs %s",
              ecm_op_name(op), k.name, (int)selected, ecm_kernel_name(op));
        if (!check_op(op, scratch)) {
            printf("ecm test: %s %s: FAILED\n", ecm_op_name(op), k.name);
            return 0;
        }
        printf("ecm test: %s %s: ok\n", ecm_op_name(op), k.name);
        ran++;
    }
    CHECK(ran > 0, "%s: no kernel ran (not even the reference)", ecm_op_name(op));
    CHECK(ecm_select_kernel(op, "no_such_kernel_1x1_ref") == ISF_ERR_INVALID_ARG, "%s: an unknown name was accepted",
          ecm_op_name(op));
    CHECK(ecm_select_kernel(op, NULL) == ISF_OK && strcmp(ecm_kernel_name(op), automatic) == 0 &&
              strcmp(automatic, first_runnable) == 0,
          "%s: automatic choice %s, after NULL %s, most preferred runnable %s", ecm_op_name(op), automatic,
          ecm_kernel_name(op), first_runnable);
    printf("ecm test: %s: %d kernel(s) checked, dispatch chooses %s\n", ecm_op_name(op), ran, automatic);
    return 1;
}

/* ECM_DISABLE=feat,feat (the cap of this engine alone): none of them may be active for ecm. */
static int check_cap(void) {
    static const struct {
        const char *name;
        uint32_t bit;
    } features[] = {{"neon", ISF_FEATURE_NEON},
                    {"fp16", ISF_FEATURE_FP16},
                    {"dotprod", ISF_FEATURE_DOTPROD},
                    {"i8mm", ISF_FEATURE_I8MM}};
    const char *cap = getenv("ECM_DISABLE");
    for (size_t i = 0; cap != NULL && i < sizeof features / sizeof *features; i++) {
        size_t len = strlen(features[i].name);
        for (const char *at = strstr(cap, features[i].name); at != NULL; at = strstr(at + 1, features[i].name)) {
            if ((at == cap || at[-1] == ',') && (at[len] == ',' || at[len] == '\0')) {
                CHECK(!(ecm_active_features() & features[i].bit), "ECM_DISABLE=%s but %s is active for ecm", cap,
                      features[i].name);
                printf("ecm test: ECM_DISABLE=%s: %s is not active\n", cap, features[i].name);
            }
        }
    }
    return 1;
}

static int check_engine_api(void) {
    static const int8_t x[] = {-128, 3, 0, 127, -1};
    CHECK(ecm_mean_square_s8(x, 5) == (16384.0 + 9 + 0 + 16129 + 1) / 5, "ecm_mean_square_s8: %f",
          ecm_mean_square_s8(x, 5));
    static const uint16_t h[] = {0xc000 /* -2 */, H_ONE, 0x4800 /* 8 */, H_QNAN};
    uint16_t y[4];
    ecm_relu6_f16(h, y, 4);
    CHECK(order_key(y[0]) == 0 && y[1] == H_ONE && y[2] == H_SIX && is_nan(y[3]),
          "ecm_relu6_f16: %#06x %#06x %#06x %#06x", y[0], y[1], y[2], y[3]);
    return 1;
}

int main(void) {
    int8_t *scratch = malloc(SUMSQ_BIG);
    if (scratch == NULL) {
        return 1;
    }
    printf("ecm test: isaforge features %#" PRIx32 ", active for ecm %#" PRIx32 "\n", isf_cpu_features(),
           ecm_active_features());
    check_cap();
    for (int op = 0; op < ECM_OP_COUNT && failures == 0; op++) {
        check_kernels((ecm_op)op, scratch);
    }
    if (failures == 0) {
        check_engine_api();
    }
    free(scratch);
    puts(failures ? "ecm test: FAILED" : "ecm test: ok");
    return failures ? 1 : 0;
}
