/* The GEMM driver, after MegEngine: block k (Kc) and n (Nc) so the packed panels stay in L1/L2, pack A and B so
 * the micro-kernel reads contiguously, and hand edge tiles to the same kernel through a scratch tile. One blocked
 * loop serves every caller: a whole one-call GEMM (B packed block by block as the call goes, or pre-packed weights),
 * and one region of a plan's C (pre-packed, with the plan's epilogue, a quantized A and blockwise scales).
 * Compiled at the architecture baseline: no variant flags here. */
#include <stdlib.h>
#include <string.h>

#include "isf_driver.h"
#include "isf_half.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

enum {
    L1_BUDGET = ISF_L1D_ASSUMED / 2, /* half of the L1D assumed when the cores do not say theirs */
    L2_BUDGET = 256 * 1024,          /* B block of Kc×Nc, at that L1D */
    /* A streaming kernel's A and B micro-panels: the SME unit reads through L2 (Apple M4's sits beside it), so Kc is
     * bounded by the region's A buffer and by how often a tile goes through ZA and back (a call per Kc block, each
     * but the first adding old C), not by L1: four times the L1 share gives 4× fewer calls and C round trips. */
    STREAMING_KC_BUDGET = 4 * L1_BUDGET,
    MC_ROWS = 64,
    REGION_A_BYTES = L1_BUDGET + PANEL_ALIGN, /* a plan region's A buffer: one MR-row A panel of one Kc block */
    REGION_TILE_BYTES = 4 * 1024, /* its scratch tile: MR × NR at SVE's longest vectors (larger tiles: their own) */
    /* Its accumulator: fp32 sums (binary16 C, fp32 kernel) or int32 sums (quantized ops, k past Kc) of a chunk's
     * rows. A region is as wide as its rows' sums fit, and a dynamic op quantizes its rows once per region: 18 KiB
     * holds 8 rows × 576 columns or a 4-row kernel's × 1152, so n = 256 (49×256×2304) or 1024 at m = 4 is one. */
    REGION_ACC_BYTES = 18 * 1024,
    REGION_MOST_BYTES = 192 * 1024, /* the most stack a region takes: streaming tiles at SVL 256 bytes */
};

const isf_epilogue isf_no_epilogue = {.steps = ISF_EPILOGUE_NONE};

static isf_pack_kind pack_kind(const isf_kernel *kern) {
    if (!kern->widened) {
        return ISF_PACK_COPY;
    }
    return kern->op == ISF_OP_GEMM_F16 ? ISF_PACK_F16_TO_F32 : ISF_PACK_BF16_TO_F32;
}

/* Kc for k: the budget's depth, or up to 1/64 more where that spares a block, then k split into blocks of one size (in
 * whole KR steps), so that no block is a sliver: k = 1024 at 341 a block is 3 calls a tile of 342, not 341 + 341 +
 * 341 + 1 (a fourth call, its set-up and C's fourth round trip, for one k step). */
static size_t even_kc(size_t k, size_t kc, size_t kr) {
    if (k <= kc) {
        return kc;
    }
    return round_up(blocks_of(k, blocks_of(k, kc + kc / 64)), kr);
}

isf_blocking isf_blocking_of(const isf_kernel *kern, size_t k, size_t vector_bytes, size_t fixed_kc) {
    const isf_op_info *op = &isf_ops[kern->op];
    size_t in = kern->widened ? sizeof(float) : op->w_bytes;
    size_t out = kern->out_bytes;
    isf_blocking bl = {{isf_kernel_mr(kern, vector_bytes), isf_kernel_nr(kern, vector_bytes), kern->kr, op->w_bytes, in,
                        pack_kind(kern), kern->layout.pack_a, kern->layout.pack_b, op->w_bits == 4},
                       out,
                       op->out_bytes,
                       op->quantized ? sizeof(int32_t) : out,
                       0,
                       0,
                       0,
                       {0, 0},
                       {0, 0}};
    size_t kr = bl.pack.nibbles ? 2 * bl.pack.kr : bl.pack.kr; /* Kc: whole pairs of k blocks for nibbles */
    if (fixed_kc) {
        bl.kc = fixed_kc;
    } else {
        /* One A and one B micro-panel in half of the cores' L1D (isf_l1d_bytes: 64 KiB on Neoverse N1/N2/V1). */
        size_t budget = kern->scalable == ISF_SCALES_WITH_SVL ? STREAMING_KC_BUDGET : isf_l1d_bytes() / 2;
        size_t kc = div_size(budget, in * (bl.pack.mr + bl.pack.nr));
        bl.kc = even_kc(k, kc < kr ? kr : div_size(kc, kr) * kr, kr);
    }
    bl.mc = round_up(MC_ROWS, bl.pack.mr);
    /* The depths of k's blocks: every one but the last (Kc; k itself when there is one block), the last. */
    size_t rest = rem_size(k, bl.kc), last = rest ? rest : bl.kc, most = k > bl.kc ? bl.kc : last;
    bl.b_depth[0] = most, bl.b_stride[0] = isf_b_panel_stride(&bl.pack, most);
    bl.b_depth[1] = last, bl.b_stride[1] = last == most ? bl.b_stride[0] : isf_b_panel_stride(&bl.pack, last);
    /* Nc: as many B panels (64-byte padded, which counts for a short k) as fill the L2 budget; with an fp32
     * accumulator (binary16 C from an fp32 kernel), no more columns than its Mc rows keep within it too. */
    /* The budget grows with the L1D as Kc does (cores with 64 KiB of L1D have L2s of 1 MiB or so), so Nc keeps its
     * columns, and A (a call packs its rows again for every Nc block) is not packed twice as often. */
    size_t l2_budget = L2_BUDGET / (2 * L1_BUDGET) * isf_l1d_bytes(); /* a second read costs a pthread_once */
    size_t panels = div_size(l2_budget, bl.b_stride[0]); /* Kc deep, or k when k is less (k = 0: Kc, no /0) */
    if (bl.out != bl.c_out) {
        size_t acc_panels = div_size(l2_budget, bl.mc * bl.pack.nr * bl.out);
        panels = acc_panels < panels ? acc_panels : panels;
    }
    bl.nc = (panels ? panels : 1) * bl.pack.nr;
    return bl;
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

/* Where the packed panels of k block [pc, pc + depth) and columns from jc start: blocks are stored one after the
 * other, each holding every NR panel of n; every block but the last is Kc deep. */
static const unsigned char *packed_block(const isf_blocking *bl, const unsigned char *panels, size_t n, size_t pc,
                                         size_t depth, size_t jc) {
    size_t n_panels = blocks_of(n, bl->pack.nr);
    size_t before = div_size(pc, bl->kc) * n_panels * bl->b_stride[0];
    return panels + before + div_size(jc, bl->pack.nr) * isf_b_stride(bl, depth);
}

/* ---- the blocked loop --------------------------------------------------------------------------------------------- */

/* The buffers of one run of the loop, 64-byte aligned: A panels (a_bytes of them), the B block packed here (NULL
 * when B is read where it lies, pre-packed and aligned), the scratch tile, and the accumulator (acc_bytes): fp32 sums
 * for binary16 C from an fp32 kernel, or the int32 sums of the Kc blocks before the last for the quantized ops. */
typedef struct {
    unsigned char *a, *b, *tile, *acc;
    size_t a_bytes, acc_bytes;
    size_t width;   /* columns of C per block: Nc for a call's buffers (sized for it), all of a region's */
    size_t held[2]; /* the k block and column of B that b holds, so a block is packed once per use */
} work_buffers;

/* Who computes the next rows of a region: the full kernel on MR rows (padded when fewer are left), or a tail
 * kernel (fewer rows, the full kernel's B panels: a few-row kernel, a row kernel) on its MR rows at a time, for the
 * last rows (m below MR, m % MR) when no more than its `most` are left, where padding would multiply the MACs. */
typedef struct {
    const isf_kernel *kern;
    isf_blocking bl;
    size_t rows, most; /* rows: MR (at this thread's SVL); most: a tail kernel's tail rows */
} row_chunk;

typedef struct {
    row_chunk full, tail[ISF_TAIL_KERNELS];
    size_t tails;
} region_kernels;

/* One run of the loop: its kernels, the caller's region, the sizes of B's panels and the buffers. */
typedef struct {
    region_kernels rk;
    const isf_region *r;
    const isf_packed_header *h;
    work_buffers *w;
} blocked_loop;

/* The most rows left that `tail` takes rather than a padded full tile of `full_mr` rows (isa.toml's tail_rows). */
static size_t tail_most(const isf_kernel *tail, size_t full_mr) {
    size_t most = tail->tail_rows ? tail->tail_rows : tail->mr == 1 ? full_mr / 2 : tail->mr;
    return most < full_mr ? most : full_mr - 1;
}

/* Of the tail kernels whose most reach rows_left, the one of the fewest; else the full kernel. */
static const row_chunk *next_chunk(const region_kernels *rk, size_t rows_left) {
    const row_chunk *ch = &rk->full;
    for (size_t t = 0; t < rk->tails; t++) {
        const row_chunk *tail = &rk->tail[t];
        if (rows_left <= tail->most && (ch == &rk->full || tail->most < ch->most)) {
            ch = tail;
        }
    }
    return ch;
}

static row_chunk chunk_of(const isf_kernel *kern, const isf_packed_header *h) {
    isf_blocking bl = isf_region_blocking(kern, h);
    row_chunk ch = {kern, bl, bl.pack.mr, 0};
    return ch;
}

/* The full kernel with `bl`, its blocking for h, which the caller has computed already, and its tail kernels, as
 * they read h's panels: a tail's rows and most only (its blocking is for the tails that will run, start_loop: a
 * blocking costs some hundred instructions, a small plan run some ten thousand). */
static region_kernels kernels_of(const isf_kernel *kern, const isf_blocking *bl, const isf_tails *tails,
                                 const isf_packed_header *h) {
    region_kernels rk = {{kern, *bl, bl->pack.mr, 0}, {{0}}, 0};
    for (size_t t = 0; tails != NULL && t < tails->count; t++) {
        const isf_kernel *tail = tails->kern[t];
        row_chunk ch = {
            .kern = tail, .rows = isf_kernel_mr(tail, (size_t)h->vector_bytes), .most = tail_most(tail, rk.full.rows)};
        rk.tail[rk.tails++] = ch;
    }
    return rk;
}

/* The chunks a region of `rows` rows ends with after its whole full tiles, in order, into `out` (the full kernel's
 * padded tile last when it takes the rest); returns how many. */
static size_t last_chunks(const region_kernels *rk, size_t rows, const row_chunk *out[ISF_MAX_MR]) {
    size_t n = 0;
    for (size_t left = rem_size(rows, rk->full.rows); left != 0 && n < ISF_MAX_MR; n++) {
        out[n] = next_chunk(rk, left);
        left = out[n] == &rk->full ? 0 : left - min_size(out[n]->rows, left);
    }
    return n;
}

/* The B panels of k block [pc, pc + depth) × `cols` columns from the region's column jc: found in the pre-packed
 * buffer, copied from it to aligned scratch when it lies at another alignment, or packed here. */
static const unsigned char *b_block(const blocked_loop *l, size_t pc, size_t depth, size_t jc, size_t cols) {
    const isf_blocking *bl = &l->rk.full.bl;
    const isf_region *r = l->r;
    work_buffers *w = l->w;
    size_t col = r->col + jc;
    if (w->b == NULL) {
        return packed_block(bl, r->panels, (size_t)l->h->n, pc, depth, col);
    }
    if (w->held[0] != pc || w->held[1] != col) {
        if (r->panels != NULL) {
            const unsigned char *src = packed_block(bl, r->panels, (size_t)l->h->n, pc, depth, col);
            memcpy(w->b, src, blocks_of(cols, bl->pack.nr) * isf_b_stride(bl, depth));
        } else {
            const unsigned char *b = r->b + (pc * r->ldb + col) * bl->pack.src_bytes;
            isf_pack_b_panels(&bl->pack, b, r->ldb, depth, cols, w->b);
        }
        w->held[0] = pc, w->held[1] = col;
    }
    return w->b;
}

/* The A panel of `rows` rows from row i for k block [pc, pc + depth): the caller's own row when one row of input
 * elements is already the panel (no widening, whole KR steps), else packed into the A buffer. */
static const unsigned char *a_panel(const row_chunk *ch, const isf_region *r, size_t i, size_t pc, size_t depth,
                                    size_t rows, work_buffers *w) {
    const isf_pack_spec *ps = &ch->bl.pack;
    const unsigned char *a = r->a + (i * r->lda + pc) * ps->src_bytes;
    if (ps->mr == 1 && ps->kind == ISF_PACK_COPY && rem_size(depth, ps->nibbles ? 2 * ps->kr : ps->kr) == 0) {
        return a;
    }
    isf_pack_a_panels(ps, a, r->lda, rows, depth, w->a);
    return w->a;
}

/* The rows from here (rows_left of the region) the full kernel takes as one macro tile in a Kc block of `depth`:
 * every row next_chunk would give it, in as many MR-row A panels as the A buffer holds and, with an accumulator of
 * acc_row_bytes a row, as many rows as it holds (at least MR, whole MR unless all fit). The same tiles as chunk by
 * chunk, so the same bytes; the grid's column steps (epilogue_across) once per column of tiles. */
static size_t full_rows(const blocked_loop *l, size_t rows_left, size_t depth, size_t acc_row_bytes) {
    const isf_pack_spec *ps = &l->rk.full.bl.pack;
    size_t rows = div_size(rows_left, ps->mr) * ps->mr, left = rows_left - rows;
    if (left != 0 && next_chunk(&l->rk, left) == &l->rk.full) {
        rows += left;
    }
    size_t most = div_size(l->w->a_bytes, isf_panel_stride(ps, depth, ps->mr)) * ps->mr; /* ≥ MR: isf_region_fits */
    if (acc_row_bytes != 0) {
        size_t acc_rows = l->w->acc_bytes / acc_row_bytes;
        most = min_size(most, acc_rows >= rows ? rows : acc_rows / ps->mr * ps->mr);
    }
    return min_size(rows, most);
}

/* The rows of the next chunk: the full kernel's macro tile, or a tail kernel's MR rows (or fewer, padded). */
static size_t chunk_rows(const blocked_loop *l, const row_chunk *ch, size_t rows_left, size_t depth,
                         size_t acc_row_bytes) {
    if (ch == &l->rk.full && ch->rows > 1) {
        return full_rows(l, rows_left, depth, acc_row_bytes);
    }
    return min_size(ch->rows, rows_left);
}

/* The region's epilogue for the column block from jc: its column arrays from that column of B on. */
static isf_epilogue block_epilogue(const blocked_loop *l, size_t jc) {
    return isf_epilogue_across(l->r->ep, l->r->col + jc, l->rk.full.bl.bias_bytes);
}

/* C and the kernel share the element type: k blocks outside, so each B block is fetched once, the full kernel's
 * rows of each k block as one macro tile (full_rows), a tail kernel's MR rows at a time. */
static void into_c(const blocked_loop *l, size_t jc, size_t cols) {
    const isf_region *r = l->r;
    size_t k = (size_t)l->h->k;
    isf_epilogue ep = block_epilogue(l, jc);
    for (size_t pc = 0, depth; pc < k; pc += depth) {
        depth = min_size(l->rk.full.bl.kc, k - pc);
        const unsigned char *bp = b_block(l, pc, depth, jc, cols);
        const isf_epilogue *e = pc + depth == k ? &ep : &isf_no_epilogue;
        for (size_t i = 0, rows; i < r->rows; i += rows) {
            const row_chunk *ch = next_chunk(&l->rk, r->rows - i);
            rows = chunk_rows(l, ch, r->rows - i, depth, 0);
            const unsigned char *ap = a_panel(ch, r, i, pc, depth, rows, l->w);
            isf_c_block dst = {r->c + (i * r->ldc + jc) * ch->bl.out, r->ldc};
            isf_macro_tile(ch->kern, &ch->bl, dst, rows, cols, depth, r->accumulate || pc > 0, e, ap, bp, l->w->tile);
        }
    }
}

/* binary16 C from an fp32 kernel: a chunk of rows at a time summed over all of k in fp32 (from C's values when
 * accumulating), the epilogue applied in fp32 with the last k block, then rounded once into C. */
static void through_acc(const blocked_loop *l, size_t jc, size_t cols) {
    const isf_region *r = l->r;
    float *acc = (float *)(void *)l->w->acc;
    size_t k = (size_t)l->h->k;
    isf_epilogue ep = block_epilogue(l, jc);
    for (size_t i = 0, rows; i < r->rows; i += rows) {
        const row_chunk *ch = next_chunk(&l->rk, r->rows - i);
        rows = chunk_rows(l, ch, r->rows - i, min_size(ch->bl.kc, k), cols * ch->bl.out);
        uint16_t *c = (uint16_t *)(void *)r->c + i * r->ldc + jc;
        for (size_t y = 0; r->accumulate && y < rows; y++) {
            for (size_t x = 0; x < cols; x++) {
                acc[y * cols + x] = isf_f16_to_f32(c[y * r->ldc + x]);
            }
        }
        for (size_t pc = 0, depth; pc < k; pc += depth) {
            depth = min_size(ch->bl.kc, k - pc);
            const unsigned char *bp = b_block(l, pc, depth, jc, cols);
            const unsigned char *ap = a_panel(ch, r, i, pc, depth, rows, l->w);
            isf_c_block dst = {l->w->acc, cols};
            isf_macro_tile(ch->kern, &ch->bl, dst, rows, cols, depth, r->accumulate || pc > 0,
                           pc + depth == k ? &ep : &isf_no_epilogue, ap, bp, l->w->tile);
        }
        for (size_t y = 0; y < rows; y++) {
            narrow_row_f16(c + y * r->ldc, acc + y * cols, cols);
        }
    }
}

/* gemm_qd8_f32's rows of one chunk: quantized with these (padding rows: nothing added, scaled by 0). */
typedef struct {
    float scale[ISF_MAX_MR], inv[ISF_MAX_MR];
    int32_t zp[ISF_MAX_MR], offset[ISF_MAX_MR];
    unsigned char nan[ISF_MAX_MR]; /* the row holds a NaN */
} row_quant;

static void quantize_rows(const isf_region *r, size_t i, size_t rows, size_t mr, size_t k, row_quant *q) {
    for (size_t y = rows; y < mr; y++) { /* the tile's padding rows */
        q->scale[y] = 0.0f, q->inv[y] = 1.0f, q->zp[y] = 0, q->offset[y] = 0, q->nan[y] = 0;
    }
    const float *a = (const float *)(const void *)r->a + i * r->lda;
    isf_quantize_rows_params(a, r->lda, rows, k, q->scale, q->inv, q->zp, q->nan);
    for (size_t y = 0; y < rows; y++) {
        q->offset[y] = -q->zp[y];
    }
}

/* A quantized op's A panel: gemm_qd8_f32's fp32 rows quantized with q as they are packed, else (q NULL) int8 rows
 * as a_panel gives them. */
static const unsigned char *quantized_a(const blocked_loop *l, const row_chunk *ch, const row_quant *q, size_t i,
                                        size_t pc, size_t depth, size_t rows) {
    if (q == NULL) {
        return a_panel(ch, l->r, i, pc, depth, rows, l->w);
    }
    const float *a = (const float *)(const void *)l->r->a + i * l->r->lda + pc;
    isf_pack_a_quantized(&ch->bl.pack, a, l->r->lda, rows, depth, q->inv, q->zp, q->nan, l->w->a);
    return l->w->a;
}

/* The quantized ops (int8 or fp32 C from int32 sums) with k split into Kc blocks or rows quantized at run time, a
 * row chunk at a time: the sums of every block but the last go to the int32 accumulator (whole tiles: the chunk's
 * MR rows × the block's columns rounded up to NR), which the last block's epilogue starts from (PARTIAL); C is
 * written once. gemm_qd8_f32 quantizes the chunk's fp32 rows as it packs them, each row's scale and zero point
 * from the whole row. */
static void quantized(const blocked_loop *l, size_t jc, size_t cols) {
    const isf_region *r = l->r;
    size_t k = (size_t)l->h->k;
    int dynamic = isf_op_dynamic(l->rk.full.kern->op);
    /* One epilogue for every chunk (its row arrays are q's, refilled per chunk): copied only to add PARTIAL. */
    row_quant q;
    isf_epilogue ep = block_epilogue(l, jc);
    if (dynamic) {
        ep.row_offset = q.offset, ep.row_scale = q.scale;
        ep.steps |= isf_small_sums(l->rk.full.kern->op, k);
    }
    for (size_t i = 0, rows; i < r->rows; i += rows) {
        const row_chunk *ch = next_chunk(&l->rk, r->rows - i);
        rows = min_size(ch->rows, r->rows - i);
        if (dynamic) {
            quantize_rows(r, i, rows, ch->rows, k, &q);
        }
        size_t width = round_up(cols, ch->bl.pack.nr);
        for (size_t pc = 0, depth; pc < k; pc += depth) {
            depth = min_size(ch->bl.kc, k - pc);
            const unsigned char *bp = b_block(l, pc, depth, jc, cols);
            const unsigned char *ap = quantized_a(l, ch, dynamic ? &q : NULL, i, pc, depth, rows);
            if (pc + depth < k) {
                isf_blocking sums = ch->bl;
                sums.out = sizeof(int32_t);
                isf_c_block acc = {l->w->acc, width};
                isf_macro_tile(ch->kern, &sums, acc, ch->rows, width, depth, pc > 0, &isf_no_epilogue, ap, bp,
                               l->w->tile);
                continue;
            }
            isf_epilogue with_partial;
            const isf_epilogue *last = &ep;
            if (pc > 0) {
                with_partial = ep;
                with_partial.steps |= ISF_EPILOGUE_PARTIAL;
                with_partial.partial = (const int32_t *)(const void *)l->w->acc;
                with_partial.partial_ld = (uint32_t)width;
                last = &with_partial;
            }
            isf_c_block dst = {r->c + (i * r->ldc + jc) * ch->bl.out, r->ldc};
            isf_macro_tile(ch->kern, &ch->bl, dst, rows, cols, depth, 0, last, ap, bp, l->w->tile);
        }
    }
}

/* The fp32 sums of one Kc block (one scale block) in `t` (rows × cols, cols apart) into C from row i, column jc of
 * the region: the first block's as they are, each later one added (one fp32 addition, left to right), the last then
 * plus the bias and clamped (ep: the block's epilogue, its out_bias from column jc). */
static void blockwise_into_c(const isf_region *r, const isf_epilogue *ep, size_t i, size_t jc, size_t rows, size_t cols,
                             const float *t, int first, int last) {
    for (size_t y = 0; y < rows; y++) {
        float *c = (float *)(void *)r->c + (i + y) * r->ldc + jc;
        for (size_t x = 0; x < cols; x++) {
            float v = first ? t[y * cols + x] : c[x] + t[y * cols + x];
            if (last && (ep->steps & ISF_EPILOGUE_OUT_BIAS)) {
                v = v + ep->out_bias[x];
            }
            c[x] = last && (ep->steps & ISF_EPILOGUE_CLAMP) ? isf_clamp_f32(v, ep->min, ep->max) : v;
        }
    }
}

/* gemm_qd8_f32_qc4w with blockwise scales, a row chunk at a time: each Kc block (one scale block) through the
 * kernel's fp32 epilogue with that block's column arrays into the accumulator, then into C. */
static void blockwise(const blocked_loop *l, size_t jc, size_t cols) {
    const isf_region *r = l->r;
    const isf_blockwise *bw = r->blockwise;
    size_t k = (size_t)l->h->k, col = r->col + jc;
    isf_epilogue block_ep = block_epilogue(l, jc);
    for (size_t i = 0, rows; i < r->rows; i += rows) {
        const row_chunk *ch = next_chunk(&l->rk, r->rows - i);
        rows = min_size(ch->rows, r->rows - i);
        row_quant q;
        quantize_rows(r, i, rows, ch->rows, k, &q);
        isf_epilogue ep = {.steps = ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_ROW_SCALE |
                                    isf_small_sums(ch->kern->op, ch->bl.kc),
                           .row_offset = q.offset,
                           .row_scale = q.scale};
        for (size_t pc = 0, depth, b = 0; pc < k; pc += depth, b++) {
            depth = min_size(ch->bl.kc, k - pc);
            const unsigned char *ap = quantized_a(l, ch, &q, i, pc, depth, rows);
            ep.col_sum = bw->col_sum + b * bw->stride + col, ep.col_scale = bw->col_scale + b * bw->stride + col;
            isf_c_block acc = {l->w->acc, cols};
            const unsigned char *bp = b_block(l, pc, depth, jc, cols);
            isf_macro_tile(ch->kern, &ch->bl, acc, rows, cols, depth, 0, &ep, ap, bp, l->w->tile);
            blockwise_into_c(r, &block_ep, i, jc, rows, cols, (const float *)(void *)l->w->acc, pc == 0,
                             pc + depth == k);
        }
    }
}

/* The one loop: column blocks of the buffers' width, each through the path of its output. */
static void run_loop(const blocked_loop *l) {
    const isf_blocking *bl = &l->rk.full.bl;
    const isf_op_info *op = &isf_ops[l->rk.full.kern->op];
    int partial_sums = op->quantized && (isf_op_dynamic(l->rk.full.kern->op) || (size_t)l->h->k > bl->kc);
    for (size_t jc = 0, cols; jc < l->r->cols; jc += cols) {
        cols = min_size(l->w->width, l->r->cols - jc);
        if (l->r->blockwise != NULL) {
            blockwise(l, jc, cols);
        } else if (partial_sums) {
            quantized(l, jc, cols);
        } else if (bl->out == bl->c_out) {
            into_c(l, jc, cols);
        } else {
            through_acc(l, jc, cols);
        }
    }
}

/* The loop's kernels (the trace names the tail kernels that will run) and a scratch tile with defined values in
 * its padding. */
static blocked_loop start_loop(const isf_kernel *kern, const isf_blocking *bl, const isf_tails *tails,
                               const isf_packed_header *h, const isf_region *r, work_buffers *w) {
    isf_trace_ran((size_t)(kern - isf_kernel_table));
    blocked_loop l = {kernels_of(kern, bl, tails, h), r, h, w};
    const row_chunk *last[ISF_MAX_MR];
    for (size_t c = 0, n = last_chunks(&l.rk, r->rows, last); c < n; c++) {
        row_chunk *tail = last[c] == &l.rk.full ? NULL : &l.rk.tail[last[c] - l.rk.tail];
        if (tail != NULL && tail->bl.pack.mr == 0) { /* its first chunk */
            isf_trace_ran((size_t)(tail->kern - isf_kernel_table));
            tail->bl = chunk_of(tail->kern, h).bl;
        }
    }
    const isf_pack_spec *ps = &l.rk.full.bl.pack;
    memset(w->tile, 0, round_up(ps->mr * ps->nr * l.rk.full.bl.out, PANEL_ALIGN));
    return l;
}

/* ---- the callers: a whole call, a plan's region --------------------------------------------------------------- */

/* A call's buffers, bounded by the blocking, never by m, n or k: the B block when B is packed here or pre-packed at
 * another alignment, and the accumulator of one macro tile when the kernel writes a wider type than C. */
static unsigned char *allocate_work(const isf_blocking *bl, const isf_region *r, size_t k, work_buffers *w) {
    const isf_pack_spec *ps = &bl->pack;
    size_t depth = min_size(bl->kc, k), rows = min_size(bl->mc, r->rows), cols = min_size(bl->nc, r->cols);
    int b_needed = r->panels == NULL || (uintptr_t)r->panels % PANEL_ALIGN != 0;
    size_t a_bytes = blocks_of(rows, ps->mr) * isf_panel_stride(ps, depth, ps->mr);
    size_t b_bytes = b_needed ? blocks_of(cols, ps->nr) * isf_b_panel_stride(ps, depth) : 0;
    size_t s_bytes = round_up(ps->mr * ps->nr * bl->out, PANEL_ALIGN);
    size_t acc_bytes = bl->out != bl->c_out ? round_up(rows * cols * bl->out, PANEL_ALIGN) : 0;
    unsigned char *work = aligned_alloc(PANEL_ALIGN, a_bytes + b_bytes + s_bytes + acc_bytes);
    if (work != NULL) {
        unsigned char *b = work + a_bytes, *tile = b + b_bytes;
        *w = (work_buffers){work,    b_needed ? b : NULL, tile,   tile + s_bytes,
                            a_bytes, acc_bytes,           bl->nc, {SIZE_MAX, SIZE_MAX}};
    }
    return work;
}

isf_status isf_run_gemm(const isf_kernel *kern, const isf_tails *tails, size_t k, size_t kc, const isf_region *r) {
    isf_packed_header h = {.n = r->cols, .k = k, .kc = kc, .vector_bytes = (uint32_t)isf_kernel_vector_bytes(kern)};
    isf_blocking bl = isf_blocking_of(kern, k, (size_t)h.vector_bytes, kc);
    h.kc = bl.kc; /* the tails' blocks: the full kernel's, whose B block and A buffer they read and fill */
    work_buffers w;
    unsigned char *work = allocate_work(&bl, r, k, &w);
    if (work == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    blocked_loop l = start_loop(kern, &bl, tails, &h, r, &w);
    run_loop(&l);
    free(work);
    return ISF_OK;
}

/* The region's accumulator: fp32 sums for binary16 C from an fp32 kernel; the int32 sums of the Kc blocks before
 * the last for the quantized ops (whole tiles), when k is split. `rows` of them: MR, or a tail kernel's. */
static size_t region_acc_bytes(const isf_kernel *kern, const isf_blocking *bl, size_t k, size_t rows, size_t cols) {
    if (isf_ops[kern->op].quantized) {
        return k > bl->kc ? rows * round_up(cols, bl->pack.nr) * sizeof(int32_t) : 0;
    }
    return bl->out != bl->c_out ? rows * cols * bl->out : 0;
}

/* The sizes of a region's stack buffers for `kern`: fixed, but for tiles that outgrow them (the streaming
 * kernels', MR × NR both growing with the SVL: 128 × 128 at 256 bytes), one A panel, one tile and one tile
 * column's sums of the plan's widest tile column (a whole tile when NR is wider). */
typedef struct {
    size_t a, tile, acc;
} region_sizes;

static region_sizes region_sizes_of(const isf_kernel *kern, const isf_blocking *bl, size_t k) {
    const isf_pack_spec *ps = &bl->pack;
    size_t acc = region_acc_bytes(kern, bl, k, ps->mr, max_size(ps->nr, ISF_PLAN_TILE_COLS));
    region_sizes s = {max_size(REGION_A_BYTES, isf_panel_stride(ps, bl->kc, ps->mr)),
                      max_size(REGION_TILE_BYTES, round_up(ps->mr * ps->nr * bl->out, PANEL_ALIGN)),
                      max_size(REGION_ACC_BYTES, round_up(acc, PANEL_ALIGN))};
    return s;
}

/* The most rows of sums a region of up to `rows` rows holds at once: the full kernel's MR, or fewer when only tail
 * kernels take its rows. */
static size_t sum_rows(const region_kernels *rk, size_t rows) {
    if (rows >= rk->full.rows) {
        return rk->full.rows;
    }
    const row_chunk *last[ISF_MAX_MR];
    size_t most = 0;
    for (size_t c = 0, n = last_chunks(rk, rows, last); c < n; c++) {
        most = max_size(most, last[c]->rows);
    }
    return most;
}

int isf_region_fits(const isf_kernel *kern, const isf_blocking *full, const isf_tails *tails,
                    const isf_packed_header *h, size_t rows, size_t cols) {
    region_kernels rk = kernels_of(kern, full, tails, h);
    const isf_blocking *bl = &rk.full.bl;
    region_sizes s = region_sizes_of(kern, bl, (size_t)h->k);
    size_t acc_rows = sum_rows(&rk, rows);
    return s.a + s.tile + s.acc <= REGION_MOST_BYTES && (!isf_ops[kern->op].quantized || bl->pack.mr <= ISF_MAX_MR) &&
           region_acc_bytes(kern, bl, (size_t)h->k, acc_rows, cols) <= s.acc;
}

void isf_gemm_region(const isf_kernel *kern, const isf_blocking *bl, const isf_tails *tails, const isf_packed_header *h,
                     const isf_region *r) {
    if (h->k == 0) {
        isf_epilogue_alone(kern->op, bl->bias_bytes, r);
        return;
    }
    /* One stack buffer (at most REGION_MOST_BYTES, isf_region_fits): A panels, the scratch tile, the sums. */
    region_sizes s = region_sizes_of(kern, bl, (size_t)h->k);
    unsigned char stack[s.a + s.tile + s.acc + PANEL_ALIGN];
    unsigned char *buf = stack + (PANEL_ALIGN - (uintptr_t)stack % PANEL_ALIGN) % PANEL_ALIGN;
    work_buffers w = {buf, NULL, buf + s.a, buf + s.a + s.tile, s.a, s.acc, r->cols, {SIZE_MAX, SIZE_MAX}};
    blocked_loop l = start_loop(kern, bl, tails, h, r, &w);
    run_loop(&l);
}

/* Pointers first: the generated table's entries of one variant point at one string when the linker merges them. */
static int same_variant(const isf_kernel *a, const isf_kernel *b) {
    return a->variant == b->variant || strcmp(a->variant, b->variant) == 0;
}

/* Whether `k` reads `full`'s B panels with fewer rows and the selection can run it. */
static int is_tail_of(const isf_kernel *k, const isf_kernel *full, const isf_selection *sel) {
    return k->mr < full->mr && k->op == full->op && k->nr == full->nr && k->kr == full->kr &&
           k->scalable == full->scalable && k->widened == full->widened && (k->required & ~sel->active) == 0;
}

/* The table holds an op's kernels of one variant together, by preference, and tail kernels rank below their full
 * one: the scan runs from `full` to the end of its variant, not the whole table (a plan run at m = 1 is a few
 * hundred thousand instructions). */
isf_tails isf_tail_kernels(const isf_kernel *full, const isf_selection *sel) {
    isf_tails t = {{NULL}, 0};
    const isf_kernel *end = isf_kernel_table + isf_kernel_table_count;
    for (const isf_kernel *k = full + 1; k < end && t.count < ISF_TAIL_KERNELS; k++) {
        if (!same_variant(k, full)) {
            break;
        }
        int seen = 0; /* the most preferred of each MR */
        for (size_t j = 0; j < t.count; j++) {
            seen |= t.kern[j]->mr == k->mr;
        }
        if (!seen && is_tail_of(k, full, sel)) {
            t.kern[t.count++] = k;
        }
    }
    return t;
}

/* Columns of n that `k` computes: n rounded up to its NR at this thread's vector length; 0 past size_t. */
static size_t padded_columns(const isf_kernel *k, size_t n) {
    size_t nr = isf_kernel_nr(k, isf_kernel_vector_bytes(k));
    return n > SIZE_MAX - nr ? 0 : blocks_of(n, nr) * nr;
}

/* Whether `fewer` padded columns save at least `percent` % of `more`. */
static int saves(size_t fewer, size_t more, unsigned percent) {
    return fewer < more && more - fewer >= more / 100 * percent + more % 100 * percent / 100;
}

/* Whether `k` computes `best`'s tiles with another NR and the selection can run it. */
static int is_column_sibling(const isf_kernel *k, const isf_kernel *best, const isf_selection *sel) {
    return k->op == best->op && k->mr == best->mr && k->nr != best->nr && k->kr == best->kr &&
           k->scalable == best->scalable && k->widened == best->widened && (k->required & ~sel->active) == 0;
}

const isf_kernel *isf_kernel_for_columns(const isf_selection *sel, isf_op op, size_t n) {
    const isf_kernel *best = sel->kernel[op], *pick = best;
    if (best == NULL || sel->named[op]) {
        return best;
    }
    size_t best_cols = padded_columns(best, n), pick_cols = best_cols;
    const isf_kernel *end = isf_kernel_table + isf_kernel_table_count;
    for (const isf_kernel *k = best + 1; k < end && same_variant(k, best); k++) {
        size_t cols = is_column_sibling(k, best, sel) ? padded_columns(k, n) : 0;
        if (cols != 0 && cols < pick_cols && saves(cols, best_cols, best->column_margin)) {
            pick = k, pick_cols = cols;
        }
    }
    return pick;
}
