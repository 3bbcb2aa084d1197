/* SVCR and TPIDR2_EL0 of the calling thread, for test_call_boundary.c. SME system registers: read only where
 * HWCAP2 says SME, and built as an object of the sme variant (-DISAFORGE_VARIANT=sme, meson.build), so that
 * check-isolation holds it to SME. Written by number: any assembler takes them. */
#include <stdint.h>

void isf_test_sme_state(uint64_t *svcr, uint64_t *tpidr2);

void isf_test_sme_state(uint64_t *svcr, uint64_t *tpidr2) {
    uint64_t s, t;
    __asm__ volatile("mrs %0, S3_3_C4_C2_2\n\tmrs %1, S3_3_C13_C0_5" : "=r"(s), "=r"(t));
    *svcr = s;
    *tpidr2 = t;
}
