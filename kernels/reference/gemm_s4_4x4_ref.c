/* Portable int8 × int4 reference: one 4×4 tile from nibble B panels (isf_internal.h), exact in int32. */
#include "isf_internal.h"

enum { MR = 4, NR = 4 };

/* The two's-complement value of a nibble. */
static int32_t nibble(unsigned v) { return (int32_t)(v & 0xFu) - (int32_t)((v & 0x8u) << 1); }

ISF_UKERNEL(gemm_s4_4x4_ref) {
    const int8_t *pa = a;
    const uint8_t *pb = b;
    int32_t acc[MR][NR] = {{0}};
    for (size_t kb = 0; kb < k_blocks; kb++, pa += MR) {
        const uint8_t *pair = pb + kb / 2 * NR;
        for (int i = 0; i < MR; i++) {
            for (int j = 0; j < NR; j++) {
                acc[i][j] += (int32_t)pa[i] * nibble(kb % 2 ? pair[j] >> 4 : pair[j]);
            }
        }
    }
    const int32_t *old = accumulate ? c : ep->steps & ISF_EPILOGUE_PARTIAL ? ep->partial : NULL;
    size_t ld_old = accumulate ? ldc : ep->partial_ld;
    for (size_t i = 0; i < MR; i++) {
        for (size_t j = 0; j < NR; j++) {
            uint32_t v = (uint32_t)acc[i][j] + (old != NULL ? (uint32_t)old[i * ld_old + j] : 0u);
            isf_epilogue_store_s32(ep, (int32_t)v, i, j, c, ldc);
        }
    }
}
