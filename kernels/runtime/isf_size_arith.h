/* Size arithmetic of the runtime: panels' alignment, rounding, blocks, and sums and products checked against the
 * room every allocation needs to round its size up to PANEL_ALIGN. */
#ifndef ISAFORGE_SIZE_ARITH_H
#define ISAFORGE_SIZE_ARITH_H

#include <stddef.h>
#include <stdint.h>

/* Every panel, and every buffer of them, starts at a multiple of it (the micro-kernel ABI, isf_internal.h). */
enum { PANEL_ALIGN = 64 };

static inline size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; } /* small x only */
static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t max_size(size_t a, size_t b) { return a > b ? a : b; }
static inline size_t blocks_of(size_t x, size_t of) { return x / of + (x % of != 0); } /* no wrap */

/* *out = a + b or a · b; 0 when it passes SIZE_MAX less PANEL_ALIGN (allocations round sizes up to PANEL_ALIGN). */
static inline int sum_fits(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out) && *out <= SIZE_MAX - PANEL_ALIGN;
}
static inline int product_fits(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out) && *out <= SIZE_MAX - PANEL_ALIGN;
}

#endif
