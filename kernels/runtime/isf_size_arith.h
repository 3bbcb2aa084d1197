/* Size arithmetic of the runtime: panels' alignment, rounding, blocks, and sums and products checked against the
 * room every allocation needs to round its size up to PANEL_ALIGN. */
#ifndef ISAFORGE_SIZE_ARITH_H
#define ISAFORGE_SIZE_ARITH_H

#include <stddef.h>
#include <stdint.h>

/* Every panel, and every buffer of them, starts at a multiple of it (the micro-kernel ABI, isf_internal.h). */
enum { PANEL_ALIGN = 64 };

/* x / d, a shift when d is a power of two (as KR, most tile sizes and the alignments are): a division takes 7 to 20
 * cycles on Arm cores, and a run's set-up, which a small GEMM pays on every call, would do dozens. The empty asm
 * keeps the division on its own branch: AArch64's udiv cannot trap, so clang would otherwise run it on both paths and
 * select. d = 0: x / 0. */
static inline size_t div_size(size_t x, size_t d) {
    if (d != 0 && (d & (d - 1)) == 0) {
        return x >> __builtin_ctzll((unsigned long long)d);
    }
    __asm__ volatile("" : "+r"(x));
    return x / d;
}
static inline size_t rem_size(size_t x, size_t d) { return x - div_size(x, d) * d; }         /* x % d, as div_size */
static inline size_t round_up(size_t x, size_t to) { return div_size(x + to - 1, to) * to; } /* small x only */
static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t max_size(size_t a, size_t b) { return a > b ? a : b; }
static inline size_t blocks_of(size_t x, size_t of) { /* no wrap */
    size_t whole = div_size(x, of);
    return whole + (x != whole * of);
}

/* *out = a + b or a · b; 0 when it passes SIZE_MAX less PANEL_ALIGN (allocations round sizes up to PANEL_ALIGN). */
static inline int sum_fits(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out) && *out <= SIZE_MAX - PANEL_ALIGN;
}
static inline int product_fits(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out) && *out <= SIZE_MAX - PANEL_ALIGN;
}

#endif
