/* The AAPCS64 call boundary of every micro-kernel this CPU runs: each is called from assembly with distinct canaries
 * in the callee-saved x19-x28 and d8-d15, which must be there when it returns, as must sp. An SME kernel enters
 * and leaves streaming mode itself (smstart and smstop zero the vector registers, so it must save d8-d15), and must
 * return with streaming mode and ZA off and TPIDR2_EL0 still 0: with SME, SVCR and TPIDR2_EL0 are read after each
 * call (sme_state.c, an object of the sme variant). Panels of zeros, three k blocks, every kernel by the table.
 * aarch64 only (meson.build). Exit status: the number of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <stddef.h>
#include <sys/auxv.h>

#include "isf_internal.h"

enum { K_BLOCKS = 3, PANEL_BYTES = 1 << 16, HWCAP2_SME_BIT = 23 /* by number: bookworm's headers lack the name */ };

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
} registers;

_Static_assert(offsetof(registers, d) == 80 && offsetof(registers, sp_before) == 144, "the trampoline's offsets");

typedef struct {
    isf_ukernel_fn fn;
    const void *a, *b;
    void *c;
    size_t ldc;
    const isf_epilogue *ep;
} call;

/* The kernel's arguments in x0-x6 as the ABI says, the canaries loaded last, everything after the return stored. */
static void call_guarded(const call *k, registers *r) {
    register uint64_t x0 __asm__("x0") = K_BLOCKS;
    register uint64_t x1 __asm__("x1") = (uint64_t)(uintptr_t)k->a;
    register uint64_t x2 __asm__("x2") = (uint64_t)(uintptr_t)k->b;
    register uint64_t x3 __asm__("x3") = (uint64_t)(uintptr_t)k->c;
    register uint64_t x4 __asm__("x4") = k->ldc;
    register uint64_t x5 __asm__("x5") = 0; /* accumulate */
    register uint64_t x6 __asm__("x6") = (uint64_t)(uintptr_t)k->ep;
    register uint64_t x15 __asm__("x15") = (uint64_t)(uintptr_t)canaries;
    register uint64_t x16 __asm__("x16") = (uint64_t)(uintptr_t)k->fn;
    register uint64_t x17 __asm__("x17") = (uint64_t)(uintptr_t)r;
    __asm__ volatile("mov x9, sp\n\t"
                     "str x9, [x17, #144]\n\t"
                     "str x17, [sp, #-16]!\n\t"
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
                     "stp x19, x20, [x9, #0]\n\t"
                     "stp x21, x22, [x9, #16]\n\t"
                     "stp x23, x24, [x9, #32]\n\t"
                     "stp x25, x26, [x9, #48]\n\t"
                     "stp x27, x28, [x9, #64]\n\t"
                     "stp d8, d9, [x9, #80]\n\t"
                     "stp d10, d11, [x9, #96]\n\t"
                     "stp d12, d13, [x9, #112]\n\t"
                     "stp d14, d15, [x9, #128]"
                     : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6), "+r"(x15), "+r"(x16),
                       "+r"(x17)
                     :
                     : "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x18", "x19", "x20", "x21", "x22", "x23",
                       "x24", "x25", "x26", "x27", "x28", "x30", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8",
                       "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
                       "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc", "memory");
}

void isf_test_sme_state(uint64_t *svcr, uint64_t *tpidr2); /* sme_state.c */

static void check_kernel(const isf_kernel *kern, void *a, void *b, void *c, int sme) {
    static const isf_epilogue none = {0};
    /* ldc covers the widest tile: NR at 2048-bit vectors, the longest either kind may have */
    call k = {kern->fn, a, b, c, (size_t)kern->nr * 16, &none};
    registers r;
    memset(&r, 0, sizeof r);
    call_guarded(&k, &r);
    uint64_t svcr = 0, tpidr2 = 0;
    if (sme) { /* nothing between the return and here enters streaming mode or touches ZA */
        isf_test_sme_state(&svcr, &tpidr2);
    }
    int kept = memcmp(r.x, canaries, sizeof r.x) == 0 && memcmp(r.d, canaries + 10, sizeof r.d) == 0;
    if (!kept || r.sp_after != r.sp_before || (svcr & 3) != 0 || tpidr2 != 0) {
        fprintf(stderr, "%s: %s%s%s%s\n", kern->name, kept ? "" : "callee-saved register changed; ",
                r.sp_after != r.sp_before ? "sp not restored; " : "", (svcr & 3) ? "returned with SM or ZA on; " : "",
                tpidr2 ? "TPIDR2_EL0 not 0" : "");
        failures++;
    }
}

int main(void) {
    void *a = calloc(1, PANEL_BYTES), *b = calloc(1, PANEL_BYTES), *c = calloc(1, 8 * PANEL_BYTES);
    CHECK(a != NULL && b != NULL && c != NULL);
    int sme = (getauxval(AT_HWCAP2) >> HWCAP2_SME_BIT) & 1;
    unsigned checked = 0;
    for (size_t i = 0; i < isf_kernel_table_count && a && b && c; i++) {
        const isf_kernel *kern = &isf_kernel_table[i];
        if ((kern->required & isf_active_features()) == kern->required) {
            check_kernel(kern, a, b, c, sme);
            checked++;
        }
    }
    printf("%u kernels called through the trampoline%s\n", checked, sme ? ", SVCR and TPIDR2_EL0 read after each" : "");
    free(a), free(b), free(c);
    return finish();
}
