/* The macro tile: rows × cols of C from packed A and B panels, the full tiles written by the kernel straight into C
 * and the edge tiles through a scratch tile, each tile's epilogue moved to its columns. Compiled at the baseline. */
#include <string.h>

#include "isf_driver.h"

/* Keeps the tile loops in functions of their own, with their pointers in registers across the kernel calls. */
#define ISF_NOINLINE __attribute__((noinline))

/* rows × n bytes between row-major buffers: an edge tile's valid part, a row of it at a time. */
static void copy_rows(unsigned char *d, size_t d_stride, const unsigned char *s, size_t s_stride, size_t rows,
                      size_t n) {
    for (; rows > 0; rows--, d += d_stride, s += s_stride) {
        memcpy(d, s, n);
    }
}

/* Edge tiles: the kernel writes a full MR×NR scratch tile; only the valid rows × cols reach C. To accumulate, the
 * valid part of C is copied in first (the rest of the tile is left over from earlier tiles: the kernel reads it, its
 * results are dropped). */
static ISF_NOINLINE void scratch_tile(const isf_kernel *kern, const isf_blocking *bl, size_t kblocks,
                                      const unsigned char *ap, const unsigned char *bp, unsigned char *c, size_t ldc,
                                      size_t rows, size_t cols, int accumulate, const isf_epilogue *ep,
                                      unsigned char *scratch) {
    size_t nr = bl->pack.nr, tile_row = nr * bl->out, c_row = ldc * bl->out, bytes = cols * bl->out;
    if (accumulate) {
        copy_rows(scratch, tile_row, c, c_row, rows, bytes);
    }
    kern->fn(kblocks, ap, bp, scratch, nr, accumulate, ep);
    copy_rows(c, c_row, scratch, tile_row, rows, bytes);
}

/* Where the tiles of one macro tile are: A panels down, B panels across, C tiles both ways. */
typedef struct {
    isf_ukernel_fn fn;
    size_t kblocks, ldc;
    int accumulate;
    const isf_epilogue *ep; /* for the grid's first column of tiles */
    const unsigned char *a, *b;
    size_t a_panel, b_panel;
    unsigned char *c;
    size_t c_down, c_right;
    size_t nr, bias_bytes;
} tile_grid;

/* down × across full tiles from the grid's origin, written by the kernel straight into C. The epilogue is copied
 * once and its column arrays stepped a tile column at a time (at m = 1 a call per column: no copy per call). */
static ISF_NOINLINE void full_tiles(const tile_grid *t, size_t down, size_t across) {
    const unsigned char *b = t->b;
    unsigned char *c_col = t->c;
    isf_epilogue ep = *t->ep;
    for (size_t j = 0; j < across; j++, b += t->b_panel, c_col += t->c_right) {
        isf_ukernel_fn fn = t->fn;
        size_t kblocks = t->kblocks, ldc = t->ldc, a_panel = t->a_panel, c_down = t->c_down;
        int accumulate = t->accumulate;
        const unsigned char *a = t->a;
        unsigned char *c = c_col;
        for (size_t i = down; i > 0; i--, a += a_panel, c += c_down) {
            fn(kblocks, a, b, c, ldc, accumulate, &ep);
        }
        isf_epilogue_step(&ep, t->nr, t->bias_bytes);
    }
}

/* One row of `across` full tiles, for an epilogue of bias and clamp at most (the float ops): the tiles a row kernel
 * runs at m = 1, one call per NR columns, so what the loop does between calls counts. Its values stay in registers
 * across the calls (full_tiles reloads its grid after each) and only the bias moves. The quantized ops keep
 * full_tiles: stepping their column arrays here too (isf_epilogue_step) cost the float rows what the loop saved. */
static ISF_NOINLINE void full_tile_row(const tile_grid *t, size_t across) {
    isf_ukernel_fn fn = t->fn;
    size_t kblocks = t->kblocks, ldc = t->ldc, b_panel = t->b_panel, c_right = t->c_right;
    int accumulate = t->accumulate;
    const unsigned char *a = t->a, *b = t->b;
    unsigned char *c = t->c;
    isf_epilogue ep = *t->ep;
    size_t bias_step = ep.bias != NULL ? t->nr * t->bias_bytes : 0;
    for (; across > 0; across--, b += b_panel, c += c_right) {
        fn(kblocks, a, b, c, ldc, accumulate, &ep);
        if (bias_step != 0) { /* no arithmetic on a null bias */
            ep.bias = (const unsigned char *)ep.bias + bias_step;
        }
    }
}

/* rows × cols of `dst` from packed A (rows) and packed B (cols): the full tiles straight into it, then the edge row
 * and column of tiles through the scratch tile. */
void isf_macro_tile(const isf_kernel *kern, const isf_blocking *bl, isf_c_block dst, size_t rows, size_t cols,
                    size_t depth, int accumulate, const isf_epilogue *ep, const unsigned char *apack,
                    const unsigned char *bpack, unsigned char *scratch) {
    size_t mr = bl->pack.mr, nr = bl->pack.nr;
    tile_grid t = {kern->fn,
                   isf_kernel_blocks(&bl->pack, depth),
                   dst.ldc,
                   accumulate,
                   ep,
                   apack,
                   bpack,
                   isf_panel_stride(&bl->pack, depth, mr),
                   isf_b_stride(bl, depth),
                   dst.c,
                   mr * dst.ldc * bl->out,
                   nr * bl->out,
                   nr,
                   bl->bias_bytes};
    size_t down = div_size(rows, mr), across = div_size(cols, nr);
    if (down == 1 && across && !(ep->steps & ~(uint32_t)(ISF_EPILOGUE_BIAS | ISF_EPILOGUE_CLAMP))) {
        full_tile_row(&t, across);
    } else if (down && across) {
        full_tiles(&t, down, across);
    }
    /* The rest through the scratch tile: the row of tiles below the full ones, then the last column. */
    for (size_t i = down, j = 0; i * mr < rows && j < across; j++) {
        isf_epilogue e = isf_epilogue_across(ep, j * nr, t.bias_bytes);
        scratch_tile(kern, bl, t.kblocks, t.a + i * t.a_panel, t.b + j * t.b_panel, t.c + i * t.c_down + j * t.c_right,
                     t.ldc, rows - i * mr, nr, accumulate, &e, scratch);
    }
    isf_epilogue e = isf_epilogue_across(ep, across * nr, t.bias_bytes);
    for (size_t i = 0, j = across; j * nr < cols && i * mr < rows; i++) {
        scratch_tile(kern, bl, t.kblocks, t.a + i * t.a_panel, t.b + j * t.b_panel, t.c + i * t.c_down + j * t.c_right,
                     t.ldc, min_size(mr, rows - i * mr), cols - j * nr, accumulate, &e, scratch);
    }
}
