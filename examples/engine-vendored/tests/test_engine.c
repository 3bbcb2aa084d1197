/* veng's own checks. matmul_f32: every kernel this CPU can run, forced by name, gives the portable kernel's result
 * bit for bit (small integers: every sum is exact) on shapes around its tiles, reading weights packed once by the
 * chosen GEMM's own packer, and writes nothing outside dst (guards before, between rows and after); a call with
 * m == 1 runs the GEMV role's kernel, any other m the GEMM role's; a chosen interface is one kernel's, whole.
 * qdot_s8: every runnable kernel against the portable one, bit for bit. The automatic choice never needs a feature
 * VENG_DISABLE caps. Under isaforge test-qemu this runs on every CPU model. Exit status: the failed checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "veng_dispatch.h"

static int failures;

static void check(int ok, const char *what, const char *kernel, size_t m, size_t n, size_t k) {
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL %s: %s (m %zu, n %zu, k %zu)\n", kernel, what, m, n, k);
    }
}

static uint32_t rng_state = 0x9e3779b9u;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* ---- matmul_f32 ------------------------------------------------------------------------------------------------ */
enum { MAXM = 9, MAXN = 17, MAXK = 33, PAD = 3, GUARD = 8 };
#define SENTINEL -777.0f

static const size_t ms[] = {1, 2, 3, 4, 5, 8, 9}, ns[] = {1, 7, 8, 9, 16, 17}, ks[] = {0, 1, 5, 32, 33};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static float lhs[MAXM * MAXK], rhs[MAXK * MAXN], bias[MAXN];
static unsigned char packed[(MAXN + 7) / 8 * (MAXK + 1) * 8 * sizeof(float)];

static void fill_operands(void) {
    for (size_t i = 0; i < COUNT(lhs); i++) {
        lhs[i] = (float)((int)(rng() % 9) - 4);
    }
    for (size_t i = 0; i < COUNT(rhs); i++) {
        rhs[i] = (float)((int)(rng() % 7) - 3);
    }
    for (size_t i = 0; i < COUNT(bias); i++) {
        bias[i] = (float)((int)(rng() % 11) - 5);
    }
}

/* dst rows of n + PAD, GUARD sentinels before and after: what a kernel wrote outside n columns shows. */
typedef struct {
    float block[GUARD + MAXM * (MAXN + PAD) + GUARD];
} c_buffer;

static float *c_data(c_buffer *c) { return c->block + GUARD; }

static void c_clear(c_buffer *c) {
    for (size_t i = 0; i < COUNT(c->block); i++) {
        c->block[i] = SENTINEL;
    }
}

static int c_untouched_outside(const c_buffer *c, size_t m, size_t n) {
    size_t ld = n + PAD;
    for (size_t i = 0; i < COUNT(c->block); i++) {
        size_t at = i - GUARD, row = at / ld, col = at % ld;
        int inside = i >= GUARD && row < m && col < n;
        if (!inside && c->block[i] != SENTINEL) {
            return 0;
        }
    }
    return 1;
}

/* Every shape through `run` against the portable kernel on the same packed weights. */
static void check_matmul_run(veng_matmul_f32_fn run, const char *name, size_t first_m, size_t last_m) {
    c_buffer got, want;
    for (size_t a = 0; a < COUNT(ns); a++) {
        for (size_t b = 0; b < COUNT(ks); b++) {
            size_t n = ns[a], k = ks[b];
            veng_matmul_f32_choose(VENG_MATMUL_F32_ROLE_GEMM)->pack_rhs(n, k, rhs, MAXN, bias, packed);
            for (size_t s = 0; s < COUNT(ms); s++) {
                size_t m = ms[s];
                if (m < first_m || m > last_m) {
                    continue;
                }
                c_clear(&got), c_clear(&want);
                run(m, n, k, lhs, MAXK, packed, c_data(&got), n + PAD, -20.0f, 20.0f);
                veng_matmul_f32_ref(m, n, k, lhs, MAXK, packed, c_data(&want), n + PAD, -20.0f, 20.0f);
                check(memcmp(got.block, want.block, sizeof got.block) == 0, "differs from the portable kernel", name, m,
                      n, k);
                check(c_untouched_outside(&got, m, n), "wrote outside dst", name, m, n, k);
            }
        }
    }
}

static void check_matmul_interfaces(void) {
    const veng_matmul_f32_kernel *gemv = veng_matmul_f32_choose(VENG_MATMUL_F32_ROLE_GEMV);
    const veng_matmul_f32_kernel *gemm = veng_matmul_f32_choose(VENG_MATMUL_F32_ROLE_GEMM);
    printf("matmul_f32: gemv %s, gemm %s\n", gemv->name, gemm->name);
    /* share_packing: both roles' kernels read the same panels */
    check(gemv->nr == gemm->nr && gemv->kr == gemm->kr && gemm->get_nr() == gemm->nr && gemm->get_kr() == gemm->kr,
          "roles disagree on packing", gemm->name, 0, 0, 0);
    check(gemm->rhs_packed_size(MAXN, MAXK) == sizeof packed, "packed size", gemm->name, 0, MAXN, MAXK);
    check(veng_matmul_f32_choose((veng_matmul_f32_role)VENG_MATMUL_F32_ROLE_COUNT) == NULL, "unknown role accepted",
          "choose", 0, 0, 0);
    /* The op's own entry point: m == 1 is the GEMV's, every other m the GEMM's. */
    check_matmul_run(veng_matmul_f32, "veng_matmul_f32", 1, MAXM);
}

static void check_every_matmul_kernel(void) {
    isf_kernel_desc d;
    for (size_t i = 0; veng_kernel_info(VENG_OP_MATMUL_F32, i, &d) == ISF_OK; i++) {
        if (!d.runnable) {
            continue;
        }
        check(veng_select_kernel(VENG_OP_MATMUL_F32, d.name) == ISF_OK, "cannot be selected", d.name, 0, 0, 0);
        for (int role = 0; role < VENG_MATMUL_F32_ROLE_COUNT; role++) {
            const veng_matmul_f32_kernel *k = veng_matmul_f32_choose((veng_matmul_f32_role)role);
            if (strcmp(k->name, d.name) == 0) {
                check_matmul_run(k->run, d.name, 1, MAXM);
            }
        }
    }
    check(veng_select_kernel(VENG_OP_MATMUL_F32, NULL) == ISF_OK, "automatic choice not restored", "select", 0, 0, 0);
}

/* ---- qdot_s8 ---------------------------------------------------------------------------------------------------- */
static void check_every_qdot_kernel(void) {
    static int8_t a[1024 + 3], b[1024 + 3];
    static const size_t sizes[] = {0, 1, 15, 16, 17, 63, 100, 1024};
    static const uint16_t scales[] = {0x3c00, 0x3555, 0x1400, 0x0001, 0x7bff, 0xbc00}; /* 1, 1/3, tiny, sub, max, -1 */
    for (size_t i = 0; i < sizeof a; i++) {
        a[i] = (int8_t)(rng() & 0xff), b[i] = (int8_t)(rng() & 0xff);
    }
    isf_kernel_desc d;
    for (size_t i = 0; veng_kernel_info(VENG_OP_QDOT_S8, i, &d) == ISF_OK; i++) {
        if (!d.runnable) {
            continue;
        }
        check(veng_select_kernel(VENG_OP_QDOT_S8, d.name) == ISF_OK, "cannot be selected", d.name, 0, 0, 0);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (size_t c = 0; c < sizeof scales / sizeof scales[0]; c++) {
                size_t n = sizes[s];
                check(veng_qdot_s8(a + 3, b + 1, n, scales[c]) == veng_qdot_s8_1x1_ref(a + 3, b + 1, n, scales[c]),
                      "differs from the portable kernel", d.name, 1, n, 0);
            }
        }
    }
    check(veng_select_kernel(VENG_OP_QDOT_S8, NULL) == ISF_OK, "automatic choice not restored", "select", 0, 0, 0);
    printf("qdot_s8: %s\n", veng_kernel_name(VENG_OP_QDOT_S8));
}

/* The automatic choice never needs a feature that VENG_DISABLE took away (or that the CPU lacks). */
static void check_caps(void) {
    for (int op = 0; op < VENG_OP_COUNT; op++) {
        isf_kernel_desc d;
        for (size_t i = 0; veng_kernel_info((veng_op)op, i, &d) == ISF_OK; i++) {
            if (strcmp(d.name, veng_kernel_name((veng_op)op)) == 0) {
                check((d.required & ~veng_active_features()) == 0, "chosen without its features", d.name, 0, 0, 0);
            }
        }
    }
}

int main(void) {
    fill_operands();
    check_matmul_interfaces();
    check_every_matmul_kernel();
    check_every_qdot_kernel();
    check_caps();
    printf("%d failed\n", failures);
    return failures;
}
