/* Quantization outside the kernels: gemm_qd8_f32's row quantization (isaforge.h gives it exactly; the scalar and the
 * AArch64 vector paths give the same bytes) and the panels it packs; the quantized ops' parameters checked at create,
 * and the plan's column arrays and epilogue made from them (or checked when a file gives them). Compiled at the
 * baseline. */
#include <stdlib.h>
#include <string.h>

#include "isf_plan.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

/* round_half_even(x) + zp, clamped to int8; NaN counts as 0 (so gives zp), as fcvtns does. */
static int8_t quantize_one(float x, int32_t zp) { return isf_requantize(x != x ? 0.0f : x, zp, -128, 127); }

#if defined(__aarch64__)
/*
 * The row's least and greatest values with 0 over its whole groups of 4 (k / 4 · 4 values), per lane. fmin/fmax
 * pass a NaN on, so that the bounds say whether there is one at no cost: a row that holds one (rare) is ranged
 * again by the scalar comparisons, which ignore it (range_rest). Two pairs of running bounds over 16 values a step:
 * one four-register load per eight min/max, no chain longer than a step's two.
 */
static inline void row_lanes(const float *a, size_t k, float32x4_t *lo, float32x4_t *hi) {
    float32x4_t vl = vdupq_n_f32(0.0f), vh = vl, wl = vl, wh = vl;
    size_t p = 0;
    for (; p + 16 <= k; p += 16) {
        float32x4x4_t x = vld1q_f32_x4(a + p);
        vl = vminq_f32(vl, vminq_f32(x.val[0], x.val[1])), vh = vmaxq_f32(vh, vmaxq_f32(x.val[0], x.val[1]));
        wl = vminq_f32(wl, vminq_f32(x.val[2], x.val[3])), wh = vmaxq_f32(wh, vmaxq_f32(x.val[2], x.val[3]));
    }
    for (; p + 4 <= k; p += 4) {
        float32x4_t x = vld1q_f32(a + p);
        vl = vminq_f32(vl, x), vh = vmaxq_f32(vh, x);
    }
    *lo = vminq_f32(vl, wl), *hi = vmaxq_f32(vh, wh);
}
#endif

/*
 * The row's bounds from those of its first p values (l, h: NaN when one of them is), with its values from p on
 * (NaN elements ignored); returns 1 when the row holds a NaN, whose bounds are then those of the scalar pass.
 */
static int range_rest(const float *a, size_t k, size_t p, float l, float h, float *lo, float *hi) {
    if (l != l || h != h) {
        l = h = 0.0f, p = 0;
    }
    int nan = 0;
    for (; p < k; p++) {
        l = a[p] < l ? a[p] : l;
        h = a[p] > h ? a[p] : h;
        nan |= a[p] != a[p];
    }
    *lo = l, *hi = h;
    return nan;
}

/* The row's least and greatest value with 0 (NaN elements ignored); returns 1 when it holds a NaN. */
static int row_range(const float *a, size_t k, float *lo, float *hi) {
#if defined(__aarch64__)
    float32x4_t vl, vh;
    row_lanes(a, k, &vl, &vh);
    return range_rest(a, k, k / 4 * 4, vminvq_f32(vl), vmaxvq_f32(vh), lo, hi);
#else
    return range_rest(a, k, 0, 0.0f, 0.0f, lo, hi);
#endif
}

/*
 * Rows' scale, 255/span and zero point (isaforge.h) from their bounds, `rows` ≤ 4 of them: on AArch64 four rows in
 * each vector instruction (a division is 7 to 10 cycles a row on the scalar pipes of N1, V1 and A55, and one vector
 * FDIV does four rows in as many), IEEE operations lane by lane, so the same bits as the scalar steps.
 */
static void params_of_ranges(size_t rows, const float *lo, const float *hi, float *scale, float *inv, int32_t *zp) {
#if defined(__aarch64__)
    float l4[4] = {0}, h4[4] = {0}, s4[4], i4[4];
    int32_t z4[4];
    memcpy(l4, lo, rows * sizeof *lo), memcpy(h4, hi, rows * sizeof *hi);
    float32x4_t l = vld1q_f32(l4), span = vsubq_f32(vld1q_f32(h4), l);
    /* Below 255·FLT_MIN the scale would be subnormal (0 to AArch32's NEON), and below 255/FLT_MAX, 255/span would
     * overflow: such a row, all but zero, is quantized as a zero row (isaforge.h). */
    span = vbslq_f32(vcltq_f32(span, vdupq_n_f32(0x1.fep-119f)), vdupq_n_f32(255.0f), span);
    float32x4_t vi = vdivq_f32(vdupq_n_f32(255.0f), span);
    vst1q_f32(s4, vdivq_f32(span, vdupq_n_f32(255.0f)));
    vst1q_f32(i4, vi);
    /* t = lo · inv in [−255, 0]; NaN only for an infinite lo (inv 0), which fcvtns makes 0 (zp −128). fcvtns: to
     * nearest, ties to even, whatever FPCR says. */
    int32x4_t z = vsubq_s32(vdupq_n_s32(-128), vcvtnq_s32_f32(vmulq_f32(l, vi)));
    vst1q_s32(z4, vmaxq_s32(vminq_s32(z, vdupq_n_s32(127)), vdupq_n_s32(-128)));
    memcpy(scale, s4, rows * sizeof *scale), memcpy(inv, i4, rows * sizeof *inv), memcpy(zp, z4, rows * sizeof *zp);
#else
    for (size_t y = 0; y < rows; y++) {
        float span = hi[y] - lo[y];
        span = span < 0x1.fep-119f ? 255.0f : span; /* as the vector path says */
        scale[y] = span / 255.0f;
        inv[y] = 255.0f / span;
        float t = lo[y] * inv[y];
        t = t != t ? 0.0f : t;
        int32_t z = -128 - (int32_t)((t + 12582912.0f) - 12582912.0f); /* 1.5·2^23: to nearest, ties to even */
        zp[y] = z < -128 ? -128 : z > 127 ? 127 : z;
    }
#endif
}

/* The row's scale, 255/span and zero point (isaforge.h); returns 1 when it holds a NaN. */
int isf_quantize_params(const float *a, size_t k, float *scale, float *inv, int32_t *zp) {
    float lo, hi;
    int nan = row_range(a, k, &lo, &hi);
    params_of_ranges(1, &lo, &hi, scale, inv, zp);
    return nan;
}

/*
 * isf_quantize_params of `rows` rows lda floats apart: on AArch64 four rows' lanes reduced together (three FMINP and
 * three FMAXP where FMINV and FMAXV would take four each) and their parameters computed together.
 */
void isf_quantize_rows_params(const float *a, size_t lda, size_t rows, size_t k, float *scale, float *inv, int32_t *zp,
                              unsigned char *nan) {
    size_t y = 0;
#if defined(__aarch64__)
    for (; y + 4 <= rows; y += 4) {
        float32x4_t vl[4], vh[4];
        float lo[4], hi[4];
        for (int i = 0; i < 4; i++) {
            row_lanes(a + (y + i) * lda, k, &vl[i], &vh[i]);
        }
        vst1q_f32(lo, vpminq_f32(vpminq_f32(vl[0], vl[1]), vpminq_f32(vl[2], vl[3])));
        vst1q_f32(hi, vpmaxq_f32(vpmaxq_f32(vh[0], vh[1]), vpmaxq_f32(vh[2], vh[3])));
        for (int i = 0; i < 4; i++) {
            nan[y + i] = (unsigned char)range_rest(a + (y + i) * lda, k, k / 4 * 4, lo[i], hi[i], &lo[i], &hi[i]);
        }
        params_of_ranges(4, lo, hi, scale + y, inv + y, zp + y);
    }
#endif
    for (; y < rows; y++) {
        nan[y] = (unsigned char)isf_quantize_params(a + y * lda, k, &scale[y], &inv[y], &zp[y]);
    }
}

#if defined(__aarch64__)
/*
 * 8 values of a NaN-free row, a·inv rounded to nearest (ties to even), with the zero point added, as int16: what
 * quantize_one's saturation to int8 is then applied to (vqmovn_s16). Not fcvtns (two µops on one pipe of Neoverse
 * N1/N2, the quantizer's bottleneck): the row's range holds 0, so |a| ≤ span and |a·inv| < 256, and v + 1.5·2^23
 * lies in [2^23, 2^24), where floats are the integers: the sum rounds v to nearest even (1.5·2^23 is even), and its
 * bits are those of 1.5·2^23 (low 16 bits zero) plus rne(v), so the low halves (uzp1) are rne(v) as int16. An
 * infinite bound makes inv 0 and a ±Inf element's product the default NaN, whose low half is 0 too, as fcvtns's
 * NaN is; a NaN element's payload would not be, so a row with one goes to quantize_one (row_range says which).
 */
static inline int16x8_t round_add_zp(const float *a, float32x4_t vi, int16x8_t vz) {
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    float32x4_t x0 = vaddq_f32(vmulq_f32(vld1q_f32(a), vi), magic);
    float32x4_t x1 = vaddq_f32(vmulq_f32(vld1q_f32(a + 4), vi), magic);
    int16x8_t n = vuzp1q_s16(vreinterpretq_s16_f32(x0), vreinterpretq_s16_f32(x1));
    return vqaddq_s16(n, vz);
}
#endif

/* q[p] for p in [0, count) of a row, with its inv and zp; `nan`: the row holds a NaN (row_range). */
static void quantize_run(const float *a, size_t count, float inv, int32_t zp, int nan, int8_t *q) {
    size_t p = 0;
#if !defined(__aarch64__)
    (void)nan; /* quantize_one handles NaN itself */
#else
    float32x4_t vi = vdupq_n_f32(inv);
    int16x8_t vz = vdupq_n_s16((int16_t)zp);
    for (; !nan && p + 8 <= count; p += 8) {
        vst1_s8(q + p, vqmovn_s16(round_add_zp(a + p, vi, vz)));
    }
#endif
    for (; p < count; p++) {
        q[p] = quantize_one(a[p] * inv, zp);
    }
}

void isf_quantize_row(const float *a, size_t k, float *scale, int32_t *zero_point, int8_t *q) {
    float s = 1.0f, inv = 1.0f;
    int32_t zp = 0;
    if (a == NULL && k != 0) {
        return;
    }
    int nan = isf_quantize_params(a, k, &s, &inv, &zp);
    if (scale != NULL) {
        *scale = s;
    }
    if (zero_point != NULL) {
        *zero_point = zp;
    }
    if (q != NULL) {
        quantize_run(a, k, inv, zp, nan, q);
    }
}

#if defined(__aarch64__)
/* 16 values of a row quantized as quantize_run's vector loop does them (the same bytes). */
static inline int8x16_t quantize16(const float *a, float32x4_t vi, int16x8_t vz) {
    return vcombine_s8(vqmovn_s16(round_add_zp(a, vi, vz)), vqmovn_s16(round_add_zp(a + 8, vi, vz)));
}

/* Four rows' 16 quantized values (k from a multiple of 16) into the panel at `d`, their first group's place: the
 * KR-byte groups transposed on registers, each block `block` bytes after the last (MR groups). */
static inline void store_4x16(const int8x16_t q[4], size_t kr, size_t block, unsigned char *d) {
    if (kr == 16) {
        for (int i = 0; i < 4; i++) {
            vst1q_s8((int8_t *)(void *)(d + 16 * i), q[i]);
        }
        return;
    }
    uint64x2_t r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = vreinterpretq_u64_s8(q[i]);
    }
    if (kr == 8) { /* rows 0 and 1, then 2 and 3, of one block are 32 bytes in a row */
        vst1q_u8(d, vreinterpretq_u8_u64(vzip1q_u64(r[0], r[1])));
        vst1q_u8(d + 16, vreinterpretq_u8_u64(vzip1q_u64(r[2], r[3])));
        vst1q_u8(d + block, vreinterpretq_u8_u64(vzip2q_u64(r[0], r[1])));
        vst1q_u8(d + block + 16, vreinterpretq_u8_u64(vzip2q_u64(r[2], r[3])));
        return;
    }
    uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(vreinterpretq_u32_u64(r[0]), vreinterpretq_u32_u64(r[1])));
    uint64x2_t t1 = vreinterpretq_u64_u32(vtrn2q_u32(vreinterpretq_u32_u64(r[0]), vreinterpretq_u32_u64(r[1])));
    uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(vreinterpretq_u32_u64(r[2]), vreinterpretq_u32_u64(r[3])));
    uint64x2_t t3 = vreinterpretq_u64_u32(vtrn2q_u32(vreinterpretq_u32_u64(r[2]), vreinterpretq_u32_u64(r[3])));
    vst1q_u8(d, vreinterpretq_u8_u64(vtrn1q_u64(t0, t2)));
    vst1q_u8(d + block, vreinterpretq_u8_u64(vtrn1q_u64(t1, t3)));
    vst1q_u8(d + 2 * block, vreinterpretq_u8_u64(vtrn2q_u64(t0, t2)));
    vst1q_u8(d + 3 * block, vreinterpretq_u8_u64(vtrn2q_u64(t1, t3)));
}

/* Rows r … r + 3 of quantize_pack_fast, with KR a constant where it is inlined (no division per 16 values). */
static inline __attribute__((always_inline)) void quantize_pack_4_rows(const float *a, size_t lda, size_t whole,
                                                                       size_t mr, size_t kr, const float *inv,
                                                                       const int32_t *zp, unsigned char *dst) {
    float32x4_t vi[4];
    int16x8_t vz[4];
    for (int i = 0; i < 4; i++) {
        vi[i] = vdupq_n_f32(inv[i]), vz[i] = vdupq_n_s16((int16_t)zp[i]);
    }
    for (size_t p = 0; p < whole; p += 16) {
        int8x16_t q[4];
        for (int i = 0; i < 4; i++) {
            q[i] = quantize16(a + i * lda + p, vi[i], vz[i]);
        }
        store_4x16(q, kr, mr * kr, dst + p / kr * mr * kr);
    }
}

/* The whole 16-value runs of k of the first rows, four at a time, quantized on registers and stored in place (no
 * buffer, no copy per group): returns the k done for the first *fast_rows rows, which it sets (none when a row
 * holds a NaN: the rows then go a row at a time). */
static size_t quantize_pack_fast(const isf_pack_spec *s, const float *a, size_t lda, size_t rows, size_t depth,
                                 const float *inv, const int32_t *zp, const unsigned char *nan, unsigned char *dst,
                                 size_t *fast_rows) {
    size_t mr = s->mr, kr = s->kr, whole = depth / 16 * 16;
    *fast_rows = (kr == 4 || kr == 8 || kr == 16) && mr % 4 == 0 && memchr(nan, 1, rows) == NULL ? rows / 4 * 4 : 0;
    for (size_t r = 0; r < *fast_rows; r += 4) {
        const float *from = a + r * lda;
        unsigned char *to = dst + r * kr;
        if (kr == 8) {
            quantize_pack_4_rows(from, lda, whole, mr, 8, inv + r, zp + r, to);
        } else if (kr == 4) {
            quantize_pack_4_rows(from, lda, whole, mr, 4, inv + r, zp + r, to);
        } else {
            quantize_pack_4_rows(from, lda, whole, mr, 16, inv + r, zp + r, to);
        }
    }
    return whole;
}
#endif

/* The A panel of `rows` fp32 rows (lda floats apart) for one k block of `depth`, quantized with each row's inv and
 * zp straight into the int8 panel layout (per KR block: row 0's KR values, row 1's, …; rows up to MR and the last
 * block's tail zero). A row kernel's one row is quantized in place; on AArch64 four rows of 16 values at a time are
 * quantized and transposed on registers; the rest, a row at a time, KR values at a time through a small buffer. */
void isf_pack_a_quantized(const isf_pack_spec *s, const float *a, size_t lda, size_t rows, size_t depth,
                          const float *inv, const int32_t *zp, const unsigned char *nan, unsigned char *dst) {
    size_t mr = s->mr, kr = s->kr, blocks = isf_kernel_blocks(s, depth), done = 0, fast_rows = 0;
    if (mr == 1) { /* a row kernel's panel is the row itself, its KR groups one after the other */
        size_t valid = rows ? depth : 0;
        quantize_run(a, valid, inv[0], zp[0], nan[0], (int8_t *)(void *)dst);
        memset(dst + valid, 0, blocks * kr - valid);
        return;
    }
#if defined(__aarch64__)
    done = quantize_pack_fast(s, a, lda, rows, depth, inv, zp, nan, dst, &fast_rows);
#endif
    int8_t run[256];
    for (size_t i = 0; i < mr; i++) {
        for (size_t p0 = i < fast_rows ? done : 0; p0 < blocks * kr; p0 += sizeof run) {
            size_t len = blocks * kr - p0 < sizeof run ? blocks * kr - p0 : sizeof run;
            size_t valid = i < rows && p0 < depth ? (depth - p0 < len ? depth - p0 : len) : 0;
            if (valid) {
                quantize_run(a + i * lda + p0, valid, inv[i], zp[i], nan[i], run);
            }
            if (valid < len) {
                memset(run + valid, 0, len - valid);
            }
            for (size_t x = 0; x < len; x += kr) { /* sizeof run is a multiple of every KR */
                isf_copy_group(dst + (((p0 + x) / kr) * mr + i) * kr, run + x, kr);
            }
        }
    }
}

/* The dynamic ops' fp32 bias has no subnormal value. */
static int f32_bias_fits(const isf_gemm_desc *d) {
    for (size_t j = 0; j < d->n; j++) {
        float b;
        memcpy(&b, (const unsigned char *)d->bias + j * sizeof b, sizeof b);
        if (subnormal(b)) {
            return 0;
        }
    }
    return 1;
}

/* The static ops' bias keeps |acc + bias| within int32 for any A and W: |acc| ≤ 32640·k. */
static int bias_fits(const isf_gemm_desc *d) {
    if (d->bias == NULL) {
        return 1;
    }
    if (isf_op_dynamic(d->op)) {
        return f32_bias_fits(d);
    }
    int64_t room = INT32_MAX - (int64_t)32640 * (int64_t)d->k;
    for (size_t j = 0; j < d->n; j++) {
        int32_t b;
        memcpy(&b, (const unsigned char *)d->bias + j * sizeof b, sizeof b);
        if ((b < 0 ? -(int64_t)b : (int64_t)b) > room) {
            return 0;
        }
    }
    return 1;
}

/* w_scale_count for these parameters: n × the blocks of k for blockwise scales (0 on overflow), else 1 or n. */
static int scale_count_fits(const isf_gemm_desc *d) {
    const isf_quant_params *q = d->quant;
    if (q->w_block == 0) {
        return q->w_scale_count == 1 || q->w_scale_count == d->n;
    }
    size_t blocks = d->k / q->w_block + (d->k % q->w_block != 0), count;
    return !__builtin_mul_overflow(blocks ? blocks : 1, d->n, &count) && q->w_scale_count == count;
}

/* The scale column j's epilogue multiplies by, from its weight scale (isaforge.h): s[j], d[j] or w_scales[j]. */
static float column_scale(isf_op op, const isf_quant_params *q, float w_scale) {
    return isf_op_dynamic(op)      ? w_scale
           : op == ISF_OP_GEMM_QS8 ? (q->a_scale * w_scale) / q->c_scale
                                   : q->a_scale * w_scale;
}

isf_status isf_quant_check(const isf_gemm_desc *d) {
    const isf_quant_params *q = d->quant;
    size_t w_bits = isf_ops[d->op].w_bits;
    int blockwise_op = w_bits == 4; /* only the int4 op takes blocks */
    if (d->k > ISF_QUANT_MAX_K || q->w_scales == NULL || (q->w_bits != 0 && q->w_bits != w_bits)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (q->w_block != 0 &&
        (!blockwise_op || q->w_block % ISF_QUANT_BLOCK_STEP != 0 || q->w_block > ISF_QUANT_MAX_BLOCK)) {
        return ISF_ERR_INVALID_ARG;
    }
    if (!scale_count_fits(d)) {
        return ISF_ERR_INVALID_ARG;
    }
    for (size_t j = 0; j < q->w_scale_count; j++) {
        if (!good_scale(q->w_scales[j]) || !good_scale(column_scale(d->op, q, q->w_scales[j]))) {
            return ISF_ERR_INVALID_ARG;
        }
    }
    if (!isf_op_dynamic(d->op) && (!good_scale(q->a_scale) || !int8_zero_point(q->a_zero_point))) {
        return ISF_ERR_INVALID_ARG;
    }
    if (d->op == ISF_OP_GEMM_QS8 && (!good_scale(q->c_scale) || !int8_zero_point(q->c_zero_point))) {
        return ISF_ERR_INVALID_ARG;
    }
    return bias_fits(d) ? ISF_OK : ISF_ERR_INVALID_ARG;
}

uint32_t isf_quant_steps(isf_op op, uint32_t flags) {
    uint32_t clamp = flags & ISF_GEMM_CLAMP ? ISF_EPILOGUE_CLAMP : 0u;
    if (op == ISF_OP_GEMM_QS8) {
        return ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_S8;
    }
    return ISF_EPILOGUE_TO_F32 | clamp |
           (isf_op_dynamic(op) ? ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_ROW_SCALE : (uint32_t)ISF_EPILOGUE_BIAS);
}

/* Σ_k W[k][j] over k [k0, k1), wrapping (exact where isaforge.h says it is used). */
static int32_t column_sum(weights_view v, size_t j, size_t k0, size_t k1) {
    uint32_t sum = 0;
    for (size_t p = k0; p < k1; p++) {
        sum += (uint32_t)v.w[p * v.ld + j];
    }
    return (int32_t)sum;
}

/* The epilogue's pointers into quant_cols (isf_epilogue's column arrays, then the blockwise ones), its bounds from
 * the plan's: what create and import share once quant_cols, its sizes and ep's scalars are set. */
void isf_quant_point_columns(isf_gemm *g) {
    size_t padded = g->quant_padded;
    int32_t *bias = (int32_t *)(void *)g->quant_cols, *col_sum = bias + padded;
    float *col_scale = (float *)(void *)(col_sum + padded), *out_bias = col_scale + padded;
    g->ep.bias = g->ep.steps & ISF_EPILOGUE_BIAS ? bias : NULL;
    g->ep.col_sum = col_sum, g->ep.col_scale = col_scale, g->ep.out_bias = out_bias;
    g->ep.min = g->out_min, g->ep.max = g->out_max;
    if (g->quant_blocks) {
        int32_t *sums = (int32_t *)(void *)(out_bias + padded);
        g->blockwise = (isf_blockwise){sums, (const float *)(void *)(sums + g->quant_blocks * padded), padded};
    }
}

/* Blockwise scales (gemm_qd8_f32_qc4w with w_block < k): per block, the column sums and the scales, block-major
 * and NR-padded (isf_blockwise), at `cols`. */
static void set_blockwise(const isf_gemm_desc *d, weights_view v, size_t padded, unsigned char *cols) {
    const isf_quant_params *q = d->quant;
    size_t blocks = (d->k + q->w_block - 1) / q->w_block;
    int32_t *sums = (int32_t *)(void *)cols;
    float *scales = (float *)(void *)(sums + blocks * padded);
    for (size_t b = 0; b < blocks; b++) {
        size_t k0 = b * q->w_block, k1 = k0 + q->w_block < d->k ? k0 + q->w_block : d->k;
        for (size_t j = 0; j < d->n; j++) {
            sums[b * padded + j] = column_sum(v, j, k0, k1);
            scales[b * padded + j] = q->w_scales[j * blocks + b];
        }
    }
}

size_t isf_quant_scale_blocks(const isf_gemm_desc *d) {
    const isf_quant_params *q = d->quant;
    if (!isf_op_quantized(d->op) || q->w_block == 0 || d->k <= q->w_block) {
        return 0;
    }
    return blocks_of(d->k, q->w_block); /* k ≤ ISF_QUANT_MAX_K (isf_quant_check): no wrap */
}

/* A quantized plan's column arrays and k held to create's rules, whether create made them or a file gave them: k at
 * most ISF_QUANT_MAX_K; scale blocks of create's sizes; every column's scale (and each block's) a finite normal
 * float, as check_quant requires of the scales given and derived; the dynamic ops' fp32 bias without subnormals. */
isf_status isf_quant_check_columns(const isf_gemm *g) {
    size_t n = g->sizes.n, padded = g->quant_padded, kc = g->sizes.kc;
    int step = kc % ISF_QUANT_BLOCK_STEP == 0 && kc <= ISF_QUANT_MAX_BLOCK;
    if (g->sizes.k > ISF_QUANT_MAX_K || (g->quant_blocks != 0 && !step)) {
        return ISF_ERR_INVALID_ARG;
    }
    for (size_t j = 0; j < n; j++) {
        if (!good_scale(g->ep.col_scale[j]) || (isf_op_dynamic(g->op) && subnormal(g->ep.out_bias[j]))) {
            return ISF_ERR_INVALID_ARG;
        }
    }
    for (size_t b = 0; b < g->quant_blocks; b++) {
        for (size_t j = 0; j < n; j++) {
            if (!good_scale(g->blockwise.col_scale[b * padded + j])) {
                return ISF_ERR_INVALID_ARG;
            }
        }
    }
    return ISF_OK;
}

/* The quantized ops' epilogue (isaforge.h's formulas): per column, the int32 bias with the activation zero point
 * folded in (static ops; wrapping, since acc + bias is known to fit), or the weight sums for the per-row zero points
 * (the dynamic ops), and the fp32 scale; the dynamic ops' fp32 bias. Arrays NR-padded with zeros. Blockwise scales
 * add their per-block arrays after these. */
isf_status isf_quant_set_epilogue(const isf_gemm_desc *d, weights_view v, isf_gemm *g) {
    const isf_quant_params *q = d->quant;
    size_t padded = g->sizes.padded, blocks = isf_quant_scale_blocks(d);
    size_t bytes = round_up(g->sizes.quant_cols, PANEL_ALIGN);
    g->quant_cols = aligned_alloc(PANEL_ALIGN, bytes);
    if (g->quant_cols == NULL) {
        return ISF_ERR_NO_MEMORY;
    }
    memset(g->quant_cols, 0, bytes);
    g->quant_padded = padded, g->quant_blocks = blocks;
    int32_t *bias = (int32_t *)(void *)g->quant_cols, *col_sum = bias + padded;
    float *col_scale = (float *)(void *)(col_sum + padded), *out_bias = col_scale + padded;
    int dyn = isf_op_dynamic(d->op);
    for (size_t j = 0; j < d->n; j++) {
        int32_t sum = column_sum(v, j, 0, d->k);
        col_sum[j] = sum;
        float ws = q->w_scales[q->w_scale_count == 1 ? 0 : j]; /* one block (k ≤ w_block): one scale per column */
        col_scale[j] = column_scale(d->op, q, ws);
        int32_t given = 0;
        if (g->bias != NULL) {
            memcpy(dyn ? (void *)&out_bias[j] : (void *)&given, g->bias + j * 4, 4);
        }
        bias[j] = (int32_t)((uint32_t)given - (uint32_t)q->a_zero_point * (uint32_t)sum);
    }
    if (blocks) {
        set_blockwise(d, v, padded, (unsigned char *)(out_bias + padded));
    }
    isf_epilogue ep = {.steps =
                           isf_quant_steps(d->op, g->flags) | (dyn && g->bias != NULL ? ISF_EPILOGUE_OUT_BIAS : 0u)};
    if (d->op == ISF_OP_GEMM_QS8) {
        int clamp = (g->flags & ISF_GEMM_CLAMP) != 0;
        ep.out_zp = q->c_zero_point;
        ep.qmin = clamp ? (int32_t)g->out_min : -128, ep.qmax = clamp ? (int32_t)g->out_max : 127;
    }
    g->ep = ep;
    isf_quant_point_columns(g);
    return isf_quant_check_columns(g);
}
