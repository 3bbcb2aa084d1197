/* The GEMM driver, after MegEngine: block k (Kc) and n (Nc) so the packed panels stay in L1/L2, pack A and B so
 * the micro-kernel reads contiguously, and hand edge tiles to the same kernel through a scratch tile. B may come
 * pre-packed (weights packed once at model load). Compiled at the architecture baseline: no variant flags here. */
#include <stdlib.h>
#include <string.h>

#include "isf_copy.h"
#include "isf_half.h"
#include "isf_driver.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

enum {
    L1_BUDGET = 16 * 1024,  /* half of a 32 KiB L1D for one A and one B micro-panel */
    L2_BUDGET = 256 * 1024, /* B block of Kc×Nc */
    MC_ROWS = 64,
};

/* What the kernels get for every k block but the last: store the sums as they are. */
const isf_epilogue isf_no_epilogue = {.steps = ISF_EPILOGUE_NONE};

/* Keeps the tile loops in functions of their own, with their pointers in registers across the kernel calls. */
#define ISF_NOINLINE __attribute__((noinline))

static isf_pack_kind pack_kind(const isf_kernel *kern) {
    if (!kern->widened) {
        return ISF_PACK_COPY;
    }
    return kern->op == ISF_OP_GEMM_F16 ? ISF_PACK_F16_TO_F32 : ISF_PACK_BF16_TO_F32;
}

isf_blocking isf_blocking_of(const isf_kernel *kern, size_t k, size_t vector_bytes, size_t fixed_kc) {
    const isf_op_info *op = &isf_ops[kern->op];
    size_t in = kern->widened ? sizeof(float) : op->w_bytes;
    size_t out = kern->widened ? sizeof(float) : op->out_bytes;
    isf_blocking bl = {{kern->mr, isf_kernel_nr(kern, vector_bytes), kern->kr, op->w_bytes, in, pack_kind(kern),
                        kern->layout.pack_a, kern->layout.pack_b, op->w_bits == 4},
                       out,
                       op->out_bytes,
                       op->quantized ? sizeof(int32_t) : out,
                       0,
                       0,
                       0};
    size_t kr = bl.pack.nibbles ? 2 * bl.pack.kr : bl.pack.kr; /* Kc: whole pairs of k blocks for nibbles */
    size_t kc = L1_BUDGET / (in * (bl.pack.mr + bl.pack.nr));
    bl.kc = fixed_kc ? fixed_kc : kc < kr ? kr : kc / kr * kr;
    bl.mc = round_up(MC_ROWS, bl.pack.mr);
    /* Nc: as many B panels (64-byte padded, which counts for a short k) as fill the L2 budget; with an fp32
     * accumulator (binary16 C from an fp32 kernel), no more columns than its Mc rows keep within it too. */
    size_t panels = L2_BUDGET / isf_b_panel_stride(&bl.pack, k != 0 && k < bl.kc ? k : bl.kc); /* k = 0: no /0 */
    if (bl.out != bl.c_out) {
        size_t acc_panels = L2_BUDGET / (bl.mc * bl.pack.nr * bl.out);
        panels = acc_panels < panels ? acc_panels : panels;
    }
    bl.nc = (panels ? panels : 1) * bl.pack.nr;
    return bl;
}

/* ---- tiles (no library calls: `isaforge bench` counts everything the driver executes) --------------------------- */

/* rows × n bytes between row-major buffers: common row sizes (one edge tile's valid width) loop over rows with two
 * possibly overlapping copies per row, decided once. */
static inline void copy_rows(unsigned char *d, size_t d_stride, const unsigned char *s, size_t s_stride, size_t rows,
                             size_t n) {
#if defined(__aarch64__)
    if (n >= 32 && n <= 64) {
        for (; rows > 0; rows--, d += d_stride, s += s_stride) {
            uint8x16x2_t x = vld1q_u8_x2(s), y = vld1q_u8_x2(s + n - 32);
            vst1q_u8_x2(d, x);
            vst1q_u8_x2(d + n - 32, y);
        }
        return;
    }
    if (n >= 16 && n < 32) {
        for (; rows > 0; rows--, d += d_stride, s += s_stride) {
            uint8x16_t x = vld1q_u8(s), y = vld1q_u8(s + n - 16);
            vst1q_u8(d, x);
            vst1q_u8(d + n - 16, y);
        }
        return;
    }
#endif
    if (n >= 8 && n < 16) {
        for (; rows > 0; rows--, d += d_stride, s += s_stride) {
            uint64_t x, y;
            memcpy(&x, s, 8), memcpy(&y, s + n - 8, 8);
            memcpy(d, &x, 8), memcpy(d + n - 8, &y, 8);
        }
        return;
    }
    if (n >= 4 && n < 8) {
        for (; rows > 0; rows--, d += d_stride, s += s_stride) {
            uint32_t x, y;
            memcpy(&x, s, 4), memcpy(&y, s + n - 4, 4);
            memcpy(d, &x, 4), memcpy(d + n - 4, &y, 4);
        }
        return;
    }
    for (; rows > 0; rows--, d += d_stride, s += s_stride) {
        isf_copy_bytes(d, s, n);
    }
}

/* One row of n > 0 fp32 values → binary16, rounded once (the widened fp16 path). AArch64: fcvtn, which rounds by FPCR
 * as the scalar fcvt of isf_f32_to_f16 does, 4 at a time, the last 4 ending at n (AArch32 NEON would flush
 * subnormals). */
static inline void narrow_row_f16(uint16_t *d, const float *s, size_t n) {
#if defined(__aarch64__)
    if (n >= 4) {
        for (; n > 4; n -= 4, d += 4, s += 4) {
            vst1_u16(d, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(s))));
        }
        vst1_u16(d + n - 4, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(s + n - 4))));
        return;
    }
#endif
    for (size_t j = 0; j < n; j++) {
        d[j] = isf_f32_to_f16(s[j]);
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

/* The epilogue of the tiles `cols` columns to the right of the grid's first: the column arrays (and the partial
 * sums) move with them. */
static inline isf_epilogue epilogue_across(const isf_epilogue *ep, size_t cols, size_t bias_bytes) {
    isf_epilogue e = *ep;
    if (e.bias != NULL) {
        e.bias = (const unsigned char *)e.bias + cols * bias_bytes;
    }
    if (e.steps & ~(uint32_t)(ISF_EPILOGUE_BIAS | ISF_EPILOGUE_CLAMP)) {
        e.partial = e.partial != NULL ? e.partial + cols : NULL;
        e.col_sum = e.col_sum != NULL ? e.col_sum + cols : NULL;
        e.col_scale = e.col_scale != NULL ? e.col_scale + cols : NULL;
        e.out_bias = e.out_bias != NULL ? e.out_bias + cols : NULL;
    }
    return e;
}

/* down × across full tiles from the grid's origin, written by the kernel straight into C. The inner loop keeps its
 * eleven values in callee-saved registers: seven moves, the call and three steps per tile. */
static ISF_NOINLINE void full_tiles(const tile_grid *t, size_t down, size_t across) {
    const unsigned char *b = t->b;
    unsigned char *c_col = t->c;
    for (size_t j = 0; j < across; j++, b += t->b_panel, c_col += t->c_right) {
        isf_ukernel_fn fn = t->fn;
        size_t kblocks = t->kblocks, ldc = t->ldc, a_panel = t->a_panel, c_down = t->c_down;
        int accumulate = t->accumulate;
        isf_epilogue ep = epilogue_across(t->ep, j * t->nr, t->bias_bytes);
        const unsigned char *a = t->a;
        unsigned char *c = c_col;
        for (size_t i = down; i > 0; i--, a += a_panel, c += c_down) {
            fn(kblocks, a, b, c, ldc, accumulate, &ep);
        }
    }
}

/* Where one macro tile writes: a row-major block of elements of the kernel's output type. */
typedef struct {
    unsigned char *c;
    size_t ldc;
} c_block;

/* rows × cols of `dst` from packed A (rows) and packed B (cols): the full tiles straight into it, then the edge row
 * and column of tiles through the scratch tile. */
static void macro_tile(const isf_kernel *kern, const isf_blocking *bl, c_block dst, size_t rows, size_t cols,
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
                   isf_b_panel_stride(&bl->pack, depth),
                   dst.c,
                   mr * dst.ldc * bl->out,
                   nr * bl->out,
                   nr,
                   bl->bias_bytes};
    size_t down = rows / mr, across = cols / nr;
    if (down && across) {
        full_tiles(&t, down, across);
    }
    /* The rest through the scratch tile: the row of tiles below the full ones, then the last column. */
    for (size_t i = down, j = 0; i * mr < rows && j < across; j++) {
        isf_epilogue e = epilogue_across(ep, j * nr, t.bias_bytes);
        scratch_tile(kern, bl, t.kblocks, t.a + i * t.a_panel, t.b + j * t.b_panel, t.c + i * t.c_down + j * t.c_right,
                     t.ldc, rows - i * mr, nr, accumulate, &e, scratch);
    }
    isf_epilogue e = epilogue_across(ep, across * nr, t.bias_bytes);
    for (size_t i = 0, j = across; j * nr < cols && i * mr < rows; i++) {
        scratch_tile(kern, bl, t.kblocks, t.a + i * t.a_panel, t.b + j * t.b_panel, t.c + i * t.c_down + j * t.c_right,
                     t.ldc, min_size(mr, rows - i * mr), cols - j * nr, accumulate, &e, scratch);
    }
}

/* Where the packed panels of k block [pc, pc + depth) and columns from jc start: blocks are stored one after the
 * other, each holding every NR panel of n; every block but the last is Kc deep. */
static const unsigned char *packed_block(const isf_blocking *bl, const unsigned char *panels, size_t n, size_t pc,
                                         size_t depth, size_t jc) {
    size_t n_panels = blocks_of(n, bl->pack.nr);
    size_t before = pc / bl->kc * n_panels * isf_b_panel_stride(&bl->pack, bl->kc);
    return panels + before + jc / bl->pack.nr * isf_b_panel_stride(&bl->pack, depth);
}

/* The work buffer of one call: packed A and B blocks, the scratch tile and, when the kernel writes a wider type
 * than C, the fp32 accumulator of one macro tile. Bounded by the blocking, never by m, n or k. */
typedef struct {
    unsigned char *apack, *bpack, *scratch, *acc;
} work_areas;

static unsigned char *allocate_work(const isf_blocking *bl, const isf_gemm_args *g, int b_needed, work_areas *w) {
    const isf_pack_spec *ps = &bl->pack;
    size_t depth = min_size(bl->kc, g->k), rows = min_size(bl->mc, g->m), cols = min_size(bl->nc, g->n);
    size_t a_bytes = blocks_of(rows, ps->mr) * isf_panel_stride(ps, depth, ps->mr);
    size_t b_bytes = b_needed ? blocks_of(cols, ps->nr) * isf_b_panel_stride(ps, depth) : 0;
    size_t s_bytes = round_up(ps->mr * ps->nr * bl->out, PANEL_ALIGN);
    size_t acc_bytes = bl->out != bl->c_out ? round_up(rows * cols * bl->out, PANEL_ALIGN) : 0;
    unsigned char *work = aligned_alloc(PANEL_ALIGN, a_bytes + b_bytes + s_bytes + acc_bytes);
    if (work == NULL) {
        return NULL;
    }
    *w = (work_areas){work, work + a_bytes, work + a_bytes + b_bytes, work + a_bytes + b_bytes + s_bytes};
    for (size_t i = 0; i < s_bytes; i += sizeof(uint64_t)) { /* defined values in the scratch tile's padding */
        uint64_t zero = 0;
        memcpy(w->scratch + i, &zero, sizeof zero);
    }
    return work;
}

/* The B panels of k block [pc, pc + depth) × columns [jc, jc + cols): packed here, or found in (or, misaligned,
 * copied from) the pre-packed buffer. `*held` names the block bpack holds, so a block is packed once per use run. */
static const unsigned char *b_panels(const isf_blocking *bl, const isf_gemm_args *g, size_t pc, size_t depth, size_t jc,
                                     size_t cols, unsigned char *bpack, size_t held[2]) {
    const isf_pack_spec *ps = &bl->pack;
    if (g->packed_b != NULL && (uintptr_t)g->packed_b % PANEL_ALIGN == 0) {
        return packed_block(bl, g->packed_b, g->n, pc, depth, jc);
    }
    if (held[0] == pc && held[1] == jc) {
        return bpack;
    }
    if (g->packed_b != NULL) { /* moved to an address with another alignment: read through aligned scratch */
        const unsigned char *src = packed_block(bl, g->packed_b, g->n, pc, depth, jc);
        copy_rows(bpack, 0, src, 0, 1, blocks_of(cols, ps->nr) * isf_b_panel_stride(ps, depth));
    } else {
        isf_pack_b_panels(ps, g->b + (pc * g->ldb + jc) * ps->src_bytes, g->ldb, depth, cols, bpack);
    }
    held[0] = pc, held[1] = jc;
    return bpack;
}

static void pack_a(const isf_blocking *bl, const isf_gemm_args *g, size_t ic, size_t rows, size_t pc, size_t depth,
                   unsigned char *apack) {
    isf_pack_a_panels(&bl->pack, g->a + (ic * g->lda + pc) * bl->pack.src_bytes, g->lda, rows, depth, apack);
}

/* The epilogue applies once, when the sums are complete: with the last k block. */
static const isf_epilogue *epilogue_at(const isf_gemm_args *g, size_t pc, size_t depth) {
    return pc + depth == g->k ? g->ep : &isf_no_epilogue;
}

/* C and the kernel share the element type: k blocks outside, so each B block is packed once and every row block
 * of A accumulates into C. */
static void blocks_into_c(const isf_kernel *kern, const isf_blocking *bl, const isf_gemm_args *g, const work_areas *w) {
    size_t held[2] = {SIZE_MAX, SIZE_MAX};
    for (size_t jc = 0, cols; jc < g->n; jc += cols) {
        cols = min_size(bl->nc, g->n - jc);
        for (size_t pc = 0, depth; pc < g->k; pc += depth) {
            depth = min_size(bl->kc, g->k - pc);
            const unsigned char *bp = b_panels(bl, g, pc, depth, jc, cols, w->bpack, held);
            for (size_t ic = 0, rows; ic < g->m; ic += rows) {
                rows = min_size(bl->mc, g->m - ic);
                pack_a(bl, g, ic, rows, pc, depth, w->apack);
                c_block dst = {g->c + (ic * g->ldc + jc) * bl->out, g->ldc};
                macro_tile(kern, bl, dst, rows, cols, depth, pc > 0, epilogue_at(g, pc, depth), w->apack, bp,
                           w->scratch);
            }
        }
    }
}

/* binary16 C from an fp32 kernel: each macro tile accumulates all of k in fp32, then is rounded once into C. With
 * more than one k block, B blocks are packed again for every row block of A (only when m > Mc). */
static void blocks_through_acc(const isf_kernel *kern, const isf_blocking *bl, const isf_gemm_args *g,
                               const work_areas *w) {
    size_t held[2] = {SIZE_MAX, SIZE_MAX};
    for (size_t jc = 0, cols; jc < g->n; jc += cols) {
        cols = min_size(bl->nc, g->n - jc);
        for (size_t ic = 0, rows; ic < g->m; ic += rows) {
            rows = min_size(bl->mc, g->m - ic);
            c_block acc = {w->acc, cols};
            for (size_t pc = 0, depth; pc < g->k; pc += depth) {
                depth = min_size(bl->kc, g->k - pc);
                const unsigned char *bp = b_panels(bl, g, pc, depth, jc, cols, w->bpack, held);
                pack_a(bl, g, ic, rows, pc, depth, w->apack);
                macro_tile(kern, bl, acc, rows, cols, depth, pc > 0, epilogue_at(g, pc, depth), w->apack, bp,
                           w->scratch);
            }
            for (size_t r = 0; r < rows; r++) {
                narrow_row_f16((uint16_t *)(void *)(g->c + ((ic + r) * g->ldc + jc) * bl->c_out),
                               (const float *)(const void *)(w->acc + r * cols * bl->out), cols);
            }
        }
    }
}

isf_status isf_run_gemm(const isf_kernel *kern, const isf_gemm_args *g) {
    isf_trace_ran((size_t)(kern - isf_kernel_table));
    isf_blocking bl =
        isf_blocking_of(kern, g->k, isf_kernel_vector_bytes(kern), g->packed_b != NULL ? g->packed_kc : 0);
    int b_needed = g->packed_b == NULL || (uintptr_t)g->packed_b % PANEL_ALIGN != 0;
    work_areas w;
    unsigned char *work = allocate_work(&bl, g, b_needed, &w);
    if (work == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    if (bl.out == bl.c_out) {
        blocks_into_c(kern, &bl, g, &w);
    } else {
        blocks_through_acc(kern, &bl, g, &w);
    }
    free(work);
    return ISF_OK;
}

/* ---- regions of C against a packed B (the plan API, plan.c) ------------------------------------------------ */

enum {
    REGION_A_BYTES = L1_BUDGET + PANEL_ALIGN, /* one MR-row A panel of one Kc block */
    REGION_TILE_BYTES = 8 * 1024,             /* the scratch tile */
    REGION_ACC_BYTES = 8 * 1024,              /* MR rows of fp32 sums for binary16 C from an fp32 kernel */
};

/* The region's accumulator: fp32 sums for binary16 C from an fp32 kernel; the int32 sums of the Kc blocks before
 * the last for the quantized ops (whole tiles), when k is split. `rows` of them: MR, or one for the row kernel. */
static size_t region_acc_bytes(const isf_kernel *kern, const isf_blocking *bl, size_t k, size_t rows, size_t cols) {
    if (isf_ops[kern->op].quantized) {
        return k > bl->kc ? rows * round_up(cols, bl->pack.nr) * sizeof(int32_t) : 0;
    }
    return bl->out != bl->c_out ? rows * cols * bl->out : 0;
}

int isf_region_fits(const isf_kernel *kern, const isf_kernel *row, const isf_packed_header *h, size_t rows,
                    size_t cols) {
    isf_blocking bl = isf_blocking_of(kern, (size_t)h->k, (size_t)h->vector_bytes, (size_t)h->kc);
    /* The row kernel takes every row of a region of at most MR / 2 (isf_gemm_region, next_chunk): one row's sums. */
    size_t acc_rows = row != NULL && 2 * rows <= bl.pack.mr ? 1 : bl.pack.mr;
    return isf_panel_stride(&bl.pack, bl.kc, bl.pack.mr) <= REGION_A_BYTES &&
           bl.pack.mr * bl.pack.nr * bl.out <= REGION_TILE_BYTES &&
           (!isf_ops[kern->op].quantized || bl.pack.mr <= ISF_MAX_MR) &&
           region_acc_bytes(kern, &bl, (size_t)h->k, acc_rows, cols) <= REGION_ACC_BYTES;
}

/* The stack buffers of one region, 64-byte aligned. */
typedef struct {
    _Alignas(PANEL_ALIGN) unsigned char a[REGION_A_BYTES];
    _Alignas(PANEL_ALIGN) unsigned char tile[REGION_TILE_BYTES];
    _Alignas(PANEL_ALIGN) unsigned char acc[REGION_ACC_BYTES];
} region_work;

/* Who computes the next rows of a region: the full kernel on MR rows (padded when fewer are left), or the row
 * kernel on one, for the last rows when no more than MR / 2 are left (m below MR, m % MR), where padding would
 * multiply the MACs by up to MR. */
typedef struct {
    const isf_kernel *kern;
    isf_blocking bl;
    size_t rows;
} row_chunk;

typedef struct {
    row_chunk full, row; /* row.kern NULL: no row kernel reads these panels */
} region_kernels;

static const row_chunk *next_chunk(const region_kernels *rk, size_t rows_left) {
    size_t mr = rk->full.bl.pack.mr;
    return rows_left >= mr || rk->row.kern == NULL || 2 * rows_left > mr ? &rk->full : &rk->row;
}

/* The A panel of `rows` rows from `a` for k block [pc, pc + depth): the caller's own row when one row of input
 * elements is already the panel (no widening, whole KR steps), else packed into w->a. */
static const unsigned char *a_panel(const row_chunk *ch, const isf_region *r, size_t i, size_t pc, size_t depth,
                                    size_t rows, region_work *w) {
    const isf_pack_spec *ps = &ch->bl.pack;
    const unsigned char *a = r->a + (i * r->lda + pc) * ps->src_bytes;
    if (ps->mr == 1 && ps->kind == ISF_PACK_COPY && depth % (ps->nibbles ? 2 * ps->kr : ps->kr) == 0) {
        return a;
    }
    isf_pack_a_panels(ps, a, r->lda, rows, depth, w->a);
    return w->a;
}

/* The epilogue of k block [pc, pc + depth): the region's on the last, none before. */
static const isf_epilogue *region_epilogue(const isf_region *r, size_t pc, size_t depth, size_t k) {
    return pc + depth == k ? r->ep : &isf_no_epilogue;
}

/* The rows from here (rows_left of the region) the full kernel takes as one macro tile in a Kc block of `depth`:
 * every row next_chunk would give it, in as many MR-row A panels as the region's A buffer holds. The same tiles as
 * chunk by chunk, so the same bytes; the grid's column steps (epilogue_across) once per column of tiles. */
static size_t full_rows(const region_kernels *rk, size_t rows_left, size_t depth) {
    const isf_pack_spec *ps = &rk->full.bl.pack;
    size_t rows = rows_left / ps->mr * ps->mr, left = rows_left - rows;
    if (left != 0 && next_chunk(rk, left) == &rk->full) {
        rows += left;
    }
    size_t most = REGION_A_BYTES / isf_panel_stride(ps, depth, ps->mr) * ps->mr; /* ≥ MR: isf_region_fits */
    return min_size(rows, most);
}

/* C and the kernel share the element type: k blocks outside, the full kernel's rows of each k block as one macro
 * tile (full_rows), the row kernel's a row at a time. */
static void region_into_c(const region_kernels *rk, const isf_packed_header *h, const unsigned char *panels,
                          const isf_region *r, region_work *w) {
    size_t k = (size_t)h->k;
    for (size_t pc = 0, depth; pc < k; pc += depth) {
        depth = min_size(rk->full.bl.kc, k - pc);
        const unsigned char *bp = packed_block(&rk->full.bl, panels, (size_t)h->n, pc, depth, r->col);
        const isf_epilogue *ep = region_epilogue(r, pc, depth, k);
        for (size_t i = 0, rows; i < r->rows; i += rows) {
            const row_chunk *ch = next_chunk(rk, r->rows - i);
            rows =
                ch == &rk->full && ch->rows > 1 ? full_rows(rk, r->rows - i, depth) : min_size(ch->rows, r->rows - i);
            const unsigned char *ap = a_panel(ch, r, i, pc, depth, rows, w);
            c_block dst = {r->c + i * r->ldc * ch->bl.out, r->ldc};
            macro_tile(ch->kern, &ch->bl, dst, rows, r->cols, depth, r->accumulate || pc > 0, ep, ap, bp, w->tile);
        }
    }
}

/* binary16 C from an fp32 kernel: a row chunk at a time summed over all of k in fp32 (from C's values when
 * accumulating), the epilogue applied in fp32 with the last k block, then rounded once into C. */
static void region_through_acc(const region_kernels *rk, const isf_packed_header *h, const unsigned char *panels,
                               const isf_region *r, region_work *w) {
    float *acc = (float *)(void *)w->acc;
    size_t k = (size_t)h->k;
    for (size_t i = 0, rows; i < r->rows; i += rows) {
        const row_chunk *ch = next_chunk(rk, r->rows - i);
        rows = min_size(ch->rows, r->rows - i);
        uint16_t *c = (uint16_t *)(void *)r->c + i * r->ldc;
        for (size_t y = 0; r->accumulate && y < rows; y++) {
            for (size_t x = 0; x < r->cols; x++) {
                acc[y * r->cols + x] = isf_f16_to_f32(c[y * r->ldc + x]);
            }
        }
        for (size_t pc = 0, depth; pc < k; pc += depth) {
            depth = min_size(ch->bl.kc, k - pc);
            const unsigned char *bp = packed_block(&ch->bl, panels, (size_t)h->n, pc, depth, r->col);
            const unsigned char *ap = a_panel(ch, r, i, pc, depth, rows, w);
            c_block dst = {w->acc, r->cols};
            macro_tile(ch->kern, &ch->bl, dst, rows, r->cols, depth, r->accumulate || pc > 0,
                       region_epilogue(r, pc, depth, k), ap, bp, w->tile);
        }
        for (size_t y = 0; y < rows; y++) {
            narrow_row_f16(c + y * r->ldc, acc + y * r->cols, r->cols);
        }
    }
}

/* gemm_qd8_f32's rows of one chunk: quantized with these (padding rows: nothing added, scaled by 0). */
typedef struct {
    float scale[ISF_MAX_MR], inv[ISF_MAX_MR];
    int32_t zp[ISF_MAX_MR], offset[ISF_MAX_MR];
} row_quant;

static void quantize_rows(const isf_region *r, size_t i, size_t rows, size_t k, row_quant *q) {
    for (size_t y = 0; y < ISF_MAX_MR; y++) {
        q->scale[y] = 0.0f, q->inv[y] = 1.0f, q->zp[y] = 0, q->offset[y] = 0;
    }
    for (size_t y = 0; y < rows; y++) {
        const float *a = (const float *)(const void *)r->a + (i + y) * r->lda;
        isf_quantize_params(a, k, &q->scale[y], &q->inv[y], &q->zp[y]);
        q->offset[y] = -q->zp[y];
    }
}

/* The quantized ops (int8 or fp32 C from int32 sums), a row chunk at a time. With k split into Kc blocks, the sums
 * of every block but the last go to the int32 accumulator (whole tiles: the chunk's MR rows × the region's columns
 * rounded up to NR), which the last block's epilogue starts from (PARTIAL); C is written once. gemm_qd8_f32
 * quantizes the chunk's fp32 rows as it packs them, each row's scale and zero point from the whole row. The static
 * ops with k in one Kc block (no PARTIAL, no per-row parameters) run the full kernel's chunks as one macro tile
 * (not a row kernel's: its A panel is the caller's row, read in place). */
static void region_quantized(const region_kernels *rk, const isf_packed_header *h, const unsigned char *panels,
                             const isf_region *r, region_work *w) {
    size_t k = (size_t)h->k;
    int dynamic = isf_ops[rk->full.kern->op].in_kind == ISF_ELEM_FLOAT;
    int one_block = !dynamic && k <= rk->full.bl.kc && rk->full.bl.pack.mr > 1; /* MR = 1: A read in place */
    for (size_t i = 0, rows; i < r->rows; i += rows) {
        const row_chunk *ch = next_chunk(rk, r->rows - i);
        rows = one_block && ch == &rk->full ? full_rows(rk, r->rows - i, k) : min_size(ch->rows, r->rows - i);
        row_quant q;
        isf_epilogue ep = *r->ep;
        if (dynamic) {
            quantize_rows(r, i, rows, k, &q);
            ep.row_offset = q.offset, ep.row_scale = q.scale;
        }
        isf_blocking sums = ch->bl;
        sums.out = sizeof(int32_t);
        size_t width = round_up(r->cols, ch->bl.pack.nr);
        for (size_t pc = 0, depth; pc < k; pc += depth) {
            depth = min_size(ch->bl.kc, k - pc);
            const unsigned char *bp = packed_block(&ch->bl, panels, (size_t)h->n, pc, depth, r->col);
            const unsigned char *ap = w->a;
            if (dynamic) {
                const float *a = (const float *)(const void *)r->a + i * r->lda + pc;
                isf_pack_a_quantized(&ch->bl.pack, a, r->lda, rows, depth, q.inv, q.zp, w->a);
            } else {
                ap = a_panel(ch, r, i, pc, depth, rows, w);
            }
            if (pc + depth < k) {
                c_block acc = {w->acc, width};
                macro_tile(ch->kern, &sums, acc, ch->rows, width, depth, pc > 0, &isf_no_epilogue, ap, bp, w->tile);
                continue;
            }
            isf_epilogue last = ep;
            if (pc > 0) {
                last.steps |= ISF_EPILOGUE_PARTIAL;
                last.partial = (const int32_t *)(const void *)w->acc, last.partial_ld = (uint32_t)width;
            }
            c_block dst = {r->c + i * r->ldc * ch->bl.out, r->ldc};
            macro_tile(ch->kern, &ch->bl, dst, rows, r->cols, depth, 0, &last, ap, bp, w->tile);
        }
    }
}

/* The fp32 sums of one Kc block (one scale block) in `t` (rows × cols, cols apart) into C: the first block's as
 * they are, each later one added (one fp32 addition, left to right), the last then plus the bias and clamped. */
static void blockwise_into_c(const isf_region *r, size_t i, size_t rows, const float *t, int first, int last) {
    const isf_epilogue *ep = r->ep;
    for (size_t y = 0; y < rows; y++) {
        float *c = (float *)(void *)r->c + (i + y) * r->ldc;
        for (size_t x = 0; x < r->cols; x++) {
            float v = first ? t[y * r->cols + x] : c[x] + t[y * r->cols + x];
            if (last && (ep->steps & ISF_EPILOGUE_OUT_BIAS)) {
                v = v + ep->out_bias[x];
            }
            c[x] = last && (ep->steps & ISF_EPILOGUE_CLAMP) ? isf_clamp_f32(v, ep->min, ep->max) : v;
        }
    }
}

/* gemm_qd8_f32_qc4w with blockwise scales, a row chunk at a time: each Kc block (one scale block) through the
 * kernel's fp32 epilogue with that block's column arrays into the region's accumulator, then into C. */
static void region_blockwise(const region_kernels *rk, const isf_packed_header *h, const unsigned char *panels,
                             const isf_region *r, region_work *w) {
    size_t k = (size_t)h->k;
    const isf_blockwise *bw = r->blockwise;
    for (size_t i = 0, rows; i < r->rows; i += rows) {
        const row_chunk *ch = next_chunk(rk, r->rows - i);
        rows = min_size(ch->rows, r->rows - i);
        row_quant q;
        quantize_rows(r, i, rows, k, &q);
        isf_epilogue ep = {.steps = ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_ROW_SCALE,
                           .row_offset = q.offset,
                           .row_scale = q.scale};
        for (size_t pc = 0, depth, b = 0; pc < k; pc += depth, b++) {
            depth = min_size(ch->bl.kc, k - pc);
            const float *a = (const float *)(const void *)r->a + i * r->lda + pc;
            isf_pack_a_quantized(&ch->bl.pack, a, r->lda, rows, depth, q.inv, q.zp, w->a);
            ep.col_sum = bw->col_sum + b * bw->stride, ep.col_scale = bw->col_scale + b * bw->stride;
            c_block acc = {w->acc, r->cols};
            const unsigned char *bp = packed_block(&ch->bl, panels, (size_t)h->n, pc, depth, r->col);
            macro_tile(ch->kern, &ch->bl, acc, rows, r->cols, depth, 0, &ep, w->a, bp, w->tile);
            blockwise_into_c(r, i, rows, (const float *)(void *)w->acc, pc == 0, pc + depth == k);
        }
    }
}

static row_chunk chunk_of(const isf_kernel *kern, const isf_packed_header *h) {
    row_chunk ch = {kern, isf_blocking_of(kern, (size_t)h->k, (size_t)h->vector_bytes, (size_t)h->kc), kern->mr};
    return ch;
}

void isf_gemm_region(const isf_kernel *kern, const isf_kernel *row, const isf_packed_header *h,
                     const unsigned char *panels, const isf_region *r) {
    isf_trace_ran((size_t)(kern - isf_kernel_table));
    region_kernels rk = {chunk_of(kern, h), {0}};
    size_t left = r->rows % kern->mr;
    if (row != NULL && left != 0 && 2 * left <= kern->mr) { /* next_chunk will run it */
        isf_trace_ran((size_t)(row - isf_kernel_table));
        rk.row = chunk_of(row, h);
    }
    region_work w;
    size_t s_bytes = round_up(rk.full.bl.pack.mr * rk.full.bl.pack.nr * rk.full.bl.out, PANEL_ALIGN);
    for (size_t i = 0; i < s_bytes; i += sizeof(uint64_t)) { /* defined values in the scratch tile's padding */
        uint64_t zero = 0;
        memcpy(w.tile + i, &zero, sizeof zero);
    }
    if (r->blockwise != NULL) {
        region_blockwise(&rk, h, panels, r, &w);
    } else if (isf_ops[kern->op].quantized) {
        region_quantized(&rk, h, panels, r, &w);
    } else if (rk.full.bl.out == rk.full.bl.c_out) {
        region_into_c(&rk, h, panels, r, &w);
    } else {
        region_through_acc(&rk, h, panels, r, &w);
    }
}

/* The row kernel (MR = 1) that reads `full`'s B panels and the selection can run, most preferred first. */
const isf_kernel *isf_row_kernel(const isf_kernel *full, const isf_selection *sel) {
    for (size_t i = 0; full->mr > 1 && i < isf_kernel_table_count; i++) {
        const isf_kernel *k = &isf_kernel_table[i];
        if (k->mr == 1 && k->op == full->op && k->nr == full->nr && k->kr == full->kr &&
            k->scalable == full->scalable && k->widened == full->widened && (k->required & ~sel->active) == 0) {
            return k;
        }
    }
    return NULL;
}
