/* The engine's own checks: every kernel this CPU can run, forced by name through the dispatched entry point, gives
 * the reference's result bit for bit on sizes around each kernel's step, on random and extreme data, and writes
 * nothing outside its output; the automatic choice is the most preferred runnable kernel; a cap in ENG_DISABLE
 * removes every kernel that needs a capped feature. Under isaforge test-qemu this runs on every CPU model of the
 * arch, so each kernel is checked wherever it is chosen. Exit status: the number of failed checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_dispatch.h"

static int failures;

static void check(int ok, const char *what, const char *kernel, size_t n) {
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL %s: %s (n = %zu)\n", kernel, what, n);
    }
}

/* xorshift32 with a fixed seed: the same data on every run and every CPU model. */
static uint32_t rng_state = 0x9e3779b9u;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Around each kernel's step of 8 or 16 elements (so every tail length is met), and one past 2^17 products of
 * -128 * -128, where the int32 sum wraps. */
static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 100, 1000, 4099};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXN 140000
#define GUARD 16

static int8_t a8[MAXN + 8], b8[MAXN + 8];

enum { DATA_RANDOM, DATA_MIN_MIN, DATA_MIN_MAX, DATA_MAX_MAX, DATA_ALTERNATING, DATA_KINDS };

static void fill_s8(int kind, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case DATA_RANDOM:
            a8[i] = (int8_t)(rng() & 0xff);
            b8[i] = (int8_t)(rng() & 0xff);
            break;
        case DATA_MIN_MIN:
            a8[i] = -128;
            b8[i] = -128;
            break;
        case DATA_MIN_MAX:
            a8[i] = -128;
            b8[i] = 127;
            break;
        case DATA_MAX_MAX:
            a8[i] = 127;
            b8[i] = 127;
            break;
        default:
            a8[i] = (i & 1) ? 127 : -128;
            b8[i] = (i % 3) ? -128 : 127;
            break;
        }
    }
}

static void check_dot(const char *kernel) {
    for (int kind = 0; kind < DATA_KINDS; kind++) {
        for (size_t s = 0; s < NSIZES; s++) {
            size_t n = sizes[s];
            fill_s8(kind, n + 8);
            check(eng_dot_s8(a8, b8, n) == eng_dot_s8_1x1_ref(a8, b8, n), "differs from the reference", kernel, n);
            /* Unaligned starts: a kernel may not assume anything of its pointers. */
            check(eng_dot_s8(a8 + 1, b8 + 3, n) == eng_dot_s8_1x1_ref(a8 + 1, b8 + 3, n),
                  "differs from the reference on unaligned data", kernel, n);
        }
    }
    fill_s8(DATA_MIN_MIN, MAXN);
    check(eng_dot_s8(a8, b8, MAXN) == eng_dot_s8_1x1_ref(a8, b8, MAXN), "wraps differently from the reference", kernel,
          MAXN);
}

static uint16_t x16[1000 + 2 * GUARD], y16[1000 + 2 * GUARD], r16[1000 + 2 * GUARD];

/* A NaN no relu of the data below can give: an element left unwritten or written outside shows as this. */
#define POISON 0x7e5au

static uint16_t random_half(void) {
    uint16_t h = (uint16_t)rng();
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x03ffu)) {
        h &= 0x83ffu; /* NaN: relu of it is unspecified; make it a subnormal of the same sign */
    }
    return h;
}

static void check_relu(const char *kernel) {
    /* Signed zeros, infinities, the smallest and largest subnormals and normals, one, then random bit patterns. */
    static const uint16_t special[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x0001, 0x8001, 0x03ff,
                                       0x83ff, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x3c00, 0xbc00};
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        if (n > 1000) {
            continue;
        }
        for (size_t offset = 0; offset < 2; offset++) {
            for (size_t i = 0; i < n + 2 * GUARD; i++) {
                size_t k = i - GUARD;
                x16[i] = i >= GUARD && k < sizeof special / sizeof special[0] ? special[k] : random_half();
                y16[i] = POISON;
                r16[i] = POISON;
            }
            const __fp16 *x = (const __fp16 *)(void *)(x16 + GUARD + offset);
            eng_relu_f16_1x1_ref(x, (__fp16 *)(void *)(r16 + GUARD + offset), n);
            eng_relu_f16(x, (__fp16 *)(void *)(y16 + GUARD + offset), n);
            check(memcmp(y16, r16, sizeof(uint16_t) * (n + 2 * GUARD)) == 0,
                  offset ? "differs from the reference (or wrote outside y) on unaligned data"
                         : "differs from the reference (or wrote outside y)",
                  kernel, n);
            /* In place, y == x. */
            memcpy(y16, x16, sizeof(uint16_t) * (n + 2 * GUARD));
            __fp16 *xy = (__fp16 *)(void *)(y16 + GUARD + offset);
            eng_relu_f16(xy, xy, n);
            check(memcmp(y16 + GUARD + offset, r16 + GUARD + offset, sizeof(uint16_t) * n) == 0,
                  "differs from the reference in place", kernel, n);
        }
    }
}

/* The features a cap may name, to check ENG_DISABLE by. */
static const struct {
    const char *name;
    uint32_t bit;
} features[] = {{"neon", ISF_FEATURE_NEON},
                {"fp16", ISF_FEATURE_FP16},
                {"dotprod", ISF_FEATURE_DOTPROD},
                {"i8mm", ISF_FEATURE_I8MM}};

static uint32_t capped_by_env(const char *var) {
    const char *list = getenv(var);
    uint32_t capped = 0;
    for (size_t f = 0; list && f < sizeof features / sizeof features[0]; f++) {
        size_t len = strlen(features[f].name);
        for (const char *p = list; (p = strstr(p, features[f].name)) != NULL; p += len) {
            if ((p == list || p[-1] == ',') && (p[len] == '\0' || p[len] == ',')) {
                capped |= features[f].bit;
            }
        }
    }
    return capped;
}

static void check_op(eng_op op, void (*run_checks)(const char *kernel)) {
    const char *op_name = eng_op_name(op);
    size_t count = eng_kernel_count(op);
    uint32_t active = eng_active_features();
    uint32_t capped = capped_by_env("ENG_DISABLE");
    const char *first_runnable = NULL;
    isf_kernel_desc desc;

    check(count >= 2, "fewer than two kernels built (the reference and one more)", op_name, count);
    check(eng_kernel_info(op, count, &desc) != ISF_OK, "kernel_info past the end answers", op_name, count);
    check(eng_select_kernel(op, "no_such_kernel") == ISF_ERR_INVALID_ARG, "an unknown name is not refused", op_name, 0);
    for (size_t i = 0; i < count; i++) {
        if (eng_kernel_info(op, i, &desc) != ISF_OK) {
            check(0, "kernel_info fails", op_name, i);
            continue;
        }
        check(desc.runnable == ((desc.required & active) == desc.required), "runnable disagrees with the features",
              desc.name, 0);
        check(!(desc.runnable && (desc.required & capped)), "runnable although ENG_DISABLE caps a feature it needs",
              desc.name, 0);
        if (!desc.runnable) {
            check(eng_select_kernel(op, desc.name) == ISF_ERR_UNSUPPORTED, "selecting it is not refused", desc.name, 0);
            printf("%-24s %-8s not runnable here\n", desc.name, desc.variant);
            continue;
        }
        if (!first_runnable) {
            first_runnable = desc.name;
        }
        int failed_before = failures;
        check(eng_select_kernel(op, desc.name) == ISF_OK, "cannot be selected", desc.name, 0);
        check(strcmp(eng_kernel_name(op), desc.name) == 0, "selected but not chosen", desc.name, 0);
        run_checks(desc.name);
        printf("%-24s %-8s %s\n", desc.name, desc.variant, failures == failed_before ? "ok" : "FAILED");
    }
    check(eng_select_kernel(op, NULL) == ISF_OK, "the automatic choice cannot be restored", op_name, 0);
    check(first_runnable && strcmp(eng_kernel_name(op), first_runnable) == 0,
          "the automatic choice is not the most preferred runnable kernel", op_name, 0);
    printf("%-24s chosen: %s\n", op_name, eng_kernel_name(op));
}

int threads_main(void); /* tests/test_threads.c */

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "threads") == 0) {
        return threads_main();
    }
    uint32_t active = eng_active_features();
    uint32_t capped = capped_by_env("ENG_DISABLE");
    printf("active features 0x%x (libisaforge's 0x%x), ENG_DISABLE=%s\n", (unsigned)active,
           (unsigned)isf_active_features(), getenv("ENG_DISABLE") ? getenv("ENG_DISABLE") : "");
    check((active & ~isf_active_features()) == 0, "the engine has a feature libisaforge does not", "eng", 0);
    check((active & capped) == 0, "a feature ENG_DISABLE caps is active", "eng", 0);
    if (!capped) {
        check(active == isf_active_features(), "features differ from libisaforge's without a cap", "eng", 0);
    }
    check(strcmp(eng_op_name(ENG_OP_DOT_S8), "dot_s8") == 0 && strcmp(eng_op_name(ENG_OP_RELU_F16), "relu_f16") == 0,
          "op names", "eng", 0);
    check_op(ENG_OP_DOT_S8, check_dot);
    check_op(ENG_OP_RELU_F16, check_relu);
    printf("%d failed checks\n", failures);
    return failures > 125 ? 125 : failures;
}
