/* veng's own checks. matmul_f32: every kernel this CPU can run, forced by name, gives the portable kernel's result
 * bit for bit (small integers: every sum is exact) on shapes around its tiles, reading weights packed once by the
 * chosen GEMM's own packer, and writes nothing outside dst (guards before, between rows and after); a call with
 * m == 1 runs the GEMV role's kernel, any other m the GEMM role's; a chosen interface is one kernel's, whole.
 * qdot_s8: every runnable kernel against the portable one, bit for bit, and (aarch64) its call boundary: callee-saved
 * registers, sp and, with SME, streaming mode and ZA off after the return. The automatic choice never needs a feature
 * VENG_DISABLE caps. Under isaforge test-qemu this runs on every CPU model. Exit status: the failed checks. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "veng_dispatch.h"

static int checks, failures;

static void check(int ok, const char *what, const char *kernel, size_t m, size_t n, size_t k) {
    checks++;
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
#if defined(__aarch64__)
/* The AAPCS64 call boundary, as an SME kernel must keep it (it enters and leaves streaming mode itself): a kernel is
 * called from assembly with distinct canaries in the callee-saved x19-x28 and d8-d15 (smstart and smstop zero the
 * vector registers), which must be there after it returns, as must sp. With SME, SVCR is read right after the
 * return: streaming mode (SM, bit 0) and ZA (bit 1) off; and TPIDR2_EL0 still 0 (no lazy ZA save left behind).
 * Those reads are SME instructions: they live in sme_state.c, an object of the sme variant. */
#define HWCAP2_SME_BIT 23 /* by number: bookworm's headers lack the name */

static const uint64_t canaries[18] = {
    0x1919191919191919u, 0x2020202020202020u, 0x2121212121212121u, 0x2222222222222222u, 0x2323232323232323u,
    0x2424242424242424u, 0x2525252525252525u, 0x2626262626262626u, 0x2727272727272727u, 0x2828282828282828u,
    0x4020000000000008u, 0x4022000000000009u, 0x4024000000000010u, 0x4026000000000011u, /* d8-d11 */
    0xc028000000000012u, 0xc02a000000000013u, 0xc02c000000000014u, 0xc02e000000000015u, /* d12-d15 */
};

typedef struct {
    uint64_t x[10]; /* x19-x28 after the call */
    uint64_t d[8];  /* d8-d15 after the call */
    uint64_t sp_before, sp_after;
    uint64_t unused, svcr, tpidr2; /* SVCR and TPIDR2_EL0 after the call, read only with SME */
    uint64_t ret;
} guarded_call;

_Static_assert(offsetof(guarded_call, d) == 80 && offsetof(guarded_call, sp_before) == 144 &&
                   offsetof(guarded_call, unused) == 160 && offsetof(guarded_call, ret) == 184,
               "the trampoline's offsets");

static uint16_t call_guarded(veng_qdot_s8_fn fn, const int8_t *a, const int8_t *b, size_t n, uint16_t scale,
                             guarded_call *rec) {
    register uint64_t x0 __asm__("x0") = (uint64_t)(uintptr_t)a;
    register uint64_t x1 __asm__("x1") = (uint64_t)(uintptr_t)b;
    register uint64_t x2 __asm__("x2") = n;
    register uint64_t x3 __asm__("x3") = scale;
    register uint64_t x15 __asm__("x15") = (uint64_t)(uintptr_t)canaries;
    register uint64_t x16 __asm__("x16") = (uint64_t)(uintptr_t)fn;
    register uint64_t x17 __asm__("x17") = (uint64_t)(uintptr_t)rec;
    __asm__ volatile("mov x9, sp\n\t"
                     "str x9, [x17, #144]\n\t"
                     "str x17, [sp, #-16]!\n\t" /* the record, across the call */
                     "ldp x19, x20, [x15, #0]\n\t"
                     "ldp x21, x22, [x15, #16]\n\t"
                     "ldp x23, x24, [x15, #32]\n\t"
                     "ldp x25, x26, [x15, #48]\n\t"
                     "ldp x27, x28, [x15, #64]\n\t"
                     "ldp d8, d9, [x15, #80]\n\t"
                     "ldp d10, d11, [x15, #96]\n\t"
                     "ldp d12, d13, [x15, #112]\n\t"
                     "ldp d14, d15, [x15, #128]\n\t"
                     "blr x16\n\t"
                     "ldr x9, [sp], #16\n\t"
                     "mov x10, sp\n\t"
                     "str x10, [x9, #152]\n\t"
                     "str x0, [x9, #184]\n\t"
                     "stp x19, x20, [x9, #0]\n\t"
                     "stp x21, x22, [x9, #16]\n\t"
                     "stp x23, x24, [x9, #32]\n\t"
                     "stp x25, x26, [x9, #48]\n\t"
                     "stp x27, x28, [x9, #64]\n\t"
                     "stp d8, d9, [x9, #80]\n\t"
                     "stp d10, d11, [x9, #96]\n\t"
                     "stp d12, d13, [x9, #112]\n\t"
                     "stp d14, d15, [x9, #128]"
                     : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x15), "+r"(x16), "+r"(x17)
                     :
                     : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x18", "x19", "x20",
                       "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x30", "v0", "v1", "v2", "v3", "v4",
                       "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18",
                       "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc",
                       "memory");
    return (uint16_t)rec->ret;
}

static int cpu_has_sme(void) { return (getauxval(AT_HWCAP2) >> HWCAP2_SME_BIT) & 1; }

void veng_test_sme_state(uint64_t *svcr, uint64_t *tpidr2); /* sme_state.c */

/* Through the trampoline: the canaries, sp, the result against a direct call's and, with SME, SVCR and TPIDR2. */
static void check_call_boundary(const veng_qdot_s8_kernel *k, const int8_t *a, const int8_t *b, size_t n,
                                uint16_t scale) {
    static const char *const xs[] = {"x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28"};
    static const char *const ds[] = {"d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15"};
    char what[96];
    guarded_call rec;
    memset(&rec, 0, sizeof rec);
    uint16_t got = call_guarded(k->run, a, b, n, scale, &rec);
    int sme = cpu_has_sme();
    if (sme) { /* nothing between the return and here enters streaming mode or touches ZA */
        veng_test_sme_state(&rec.svcr, &rec.tpidr2);
    }
    check(got == k->run(a, b, n, scale), "differs through the trampoline from a direct call", k->name, 1, n, 0);
    for (int i = 0; i < 10; i++) {
        snprintf(what, sizeof what, "callee-saved %s not preserved", xs[i]);
        check(rec.x[i] == canaries[i], what, k->name, 1, n, 0);
    }
    for (int i = 0; i < 8; i++) {
        snprintf(what, sizeof what, "callee-saved %s not preserved (smstart/smstop zero it)", ds[i]);
        check(rec.d[i] == canaries[10 + i], what, k->name, 1, n, 0);
    }
    check(rec.sp_after == rec.sp_before, "sp not restored", k->name, 1, n, 0);
    if (sme) {
        check((rec.svcr & 1) == 0, "returned in streaming mode (SVCR.SM set)", k->name, 1, n, 0);
        check((rec.svcr & 2) == 0, "returned with ZA on (SVCR.ZA set)", k->name, 1, n, 0);
        check(rec.tpidr2 == 0, "returned with TPIDR2_EL0 not 0", k->name, 1, n, 0);
    }
}
#endif

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
        const veng_qdot_s8_kernel *k = veng_qdot_s8_choose(VENG_QDOT_S8_ROLE_ANY);
        check(strcmp(k->name, d.name) == 0, "not the chosen kernel once selected", d.name, 0, 0, 0);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (size_t c = 0; c < sizeof scales / sizeof scales[0]; c++) {
                size_t n = sizes[s];
                check(veng_qdot_s8(a + 3, b + 1, n, scales[c]) == veng_qdot_s8_1x1_ref(a + 3, b + 1, n, scales[c]),
                      "differs from the portable kernel", d.name, 1, n, 0);
#if defined(__aarch64__)
                check_call_boundary(k, a + 3, b + 1, n, scales[c]);
#endif
            }
        }
        printf("qdot_s8: ran %s\n", d.name);
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
    printf("%d checks, %d failed\n", checks, failures);
    return failures;
}
