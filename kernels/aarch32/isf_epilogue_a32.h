/* What the A32 assembly kernels share, for assembly only: the quantized epilogue of the int8 kernels
 * (gemm_s8_4x8x4_dotprod.S, gemm_s8_4x8x8_i8mm.S), the way their accumulators start from the bias or the partial
 * sums, and the tile helpers gemm_bf16_4x8x4_bf16.S uses too (zeroing, the row/block swaps, the clamp, the store).
 * Each kernel keeps its own k loop. Included from the source root ("kernels/aarch32/isf_epilogue_a32.h"), so the
 * .inst-encoded copy of a kernel (in the build directory) finds it; baseline NEON only, so nothing here needs the
 * .inst encoder, which rewrites the kernel file alone.
 *
 * The tile: 4 rows x 8 columns of 32-bit lanes in q8-q15, row r in q(8 + 2r) (columns 0-3) and q(9 + 2r) (columns
 * 4-7), i.e. d(16 + 4r)-d(19 + 4r): one vld1/vst1 of four D registers. Register contract of the int8 macros:
 * r3 C, r12 ldc in bytes (r12 the epilogue where a macro says so); the kernel pushed the D registers \saved
 * (restored on every way out) and finds its stack arguments above them: ldc at [sp, #\ldc], the epilogue at
 * [sp, #\ep].
 */
#ifndef ISAFORGE_EPILOGUE_A32_H
#define ISAFORGE_EPILOGUE_A32_H
/* Assembly: not for clang-format. */
/* clang-format off */

#include "isf_epilogue_offsets.h"

/* The ISF_EPILOGUE_* steps as masks for tst. */
#define STEP_BIAS (1 << ISF_EP_BIT_BIAS)
#define STEP_CLAMP (1 << ISF_EP_BIT_CLAMP)
#define STEP_PARTIAL (1 << ISF_EP_BIT_PARTIAL)
#define STEP_ROW_OFFSET (1 << ISF_EP_BIT_ROW_OFFSET)
#define STEP_TO_F32 (1 << ISF_EP_BIT_TO_F32)
#define STEP_ROW_SCALE (1 << ISF_EP_BIT_ROW_SCALE)
#define STEP_OUT_BIAS (1 << ISF_EP_BIT_OUT_BIAS)
#define STEP_TO_S8 (1 << ISF_EP_BIT_TO_S8)

/* q\r = q\r op \v, or q\r = op(q\r) without \v: one accumulator. */
	.macro	one op, r, v
	.ifb	\v
	\op	q\r, q\r
	.else
	\op	q\r, q\r, \v
	.endif
	.endm

/* One step on the 8 accumulators, q8 to q15. */
	.macro	each op, v
	.irp	r, 8, 9, 10, 11, 12, 13, 14, 15
	one	\op, \r, \v
	.endr
	.endm

/* The accumulators start at zero. */
	.macro	zero_tile
	.irp	r, 8, 9, 10, 11, 12, 13, 14, 15
	vmov.i32	q\r, #0
	.endr
	.endm

/* One row's two accumulators q\a, q\b: q\a op \va, q\b op \vb. */
	.macro	row op, a, b, va, vb
	one	\op, \a, \va
	one	\op, \b, \vb
	.endm

/* acc = acc op column vector, row by row: columns 0-3 by \lo, 4-7 by \hi. */
	.macro	by_column op, lo, hi
	row	\op, 8, 9, \lo, \hi
	row	\op, 10, 11, \lo, \hi
	row	\op, 12, 13, \lo, \hi
	row	\op, 14, 15, \lo, \hi
	.endm

/* acc = acc op the row's value, row r's in lane r & 1 of d(r >> 1) (d0-d1). */
	.macro	by_row op
	row	\op, 8, 9, d0[0], d0[0]
	row	\op, 10, 11, d0[1], d0[1]
	row	\op, 12, 13, d1[0], d1[0]
	row	\op, 14, 15, d1[1], d1[1]
	.endm

/* The clamp: vmax with \lo in every lane, then vmin with \hi (FMAX then FMIN: a NaN stays NaN, -0 < +0). */
	.macro	clamp lo, hi
	each	vmax.f32, \lo
	each	vmin.f32, \hi
	.endm

/* The 4 rows from or to memory \stride bytes apart (\op: vld1.32 or vst1.32); \ptr steps on, except after the
 * last row with \last = 0. */
	.macro	tile_rows op, ptr, stride, last=1
	\op	{d16-d19}, [\ptr], \stride
	\op	{d20-d23}, [\ptr], \stride
	\op	{d24-d27}, [\ptr], \stride
	.if	\last
	\op	{d28-d31}, [\ptr], \stride
	.else
	\op	{d28-d31}, [\ptr]
	.endif
	.endm

/* C's rows into the tile, r3 left where it was. */
	.macro	load_c
	tile_rows	vld1.32, r3, r12
	sub	r3, r3, r12, lsl #2
	.endm

/* 2x2 blocks (vsmmla, vmmla.bf16: q(8 + 4i + j) holds rows 2i, 2i+1 x columns 2j, 2j+1, its low D register the
 * even row's) to rows, and back: four vswp per row pair. */
	.macro	blocks_to_rows
	vswp	d17, d18
	vswp	d18, d20
	vswp	d19, d22
	vswp	d22, d21
	vswp	d25, d26
	vswp	d26, d28
	vswp	d27, d30
	vswp	d30, d29
	.endm

	.macro	rows_to_blocks
	vswp	d22, d21
	vswp	d19, d22
	vswp	d18, d20
	vswp	d17, d18
	vswp	d30, d29
	vswp	d27, d30
	vswp	d26, d28
	vswp	d25, d26
	.endm

/* The tile in row order goes out as it is: .Lstore_rows, then the return. */
	.macro	store_rows saved
.Lstore_rows:
	tile_rows	vst1.32, r3, r12
	vpop	{\saved}
	bx	lr
	.endm

/* The int8 kernels' store: the quantized one (quantized_store) when a quantized step is asked, else
 * .Lstore_rows (int32 C, or fp32 from .Lquantized). */
	.macro	tile_store ep, saved
	ldr	r0, [sp, #\ep]
	ldr	r1, [r0]
	tst	r1, #(STEP_ROW_OFFSET | STEP_TO_F32 | STEP_TO_S8)
	bne	.Lquantized
	store_rows	\saved
	.endm

/* BIAS or PARTIAL asked (r12 = accumulate): to .Lbias_c (accumulate = 1), .Lpartial (PARTIAL comes with
 * accumulate = 0 only, the contract) or on to the kernel's own BIAS start with accumulate = 0, r12 = ep. */
	.macro	bias_or_partial ep
	cmp	r12, #0
	ldr	r12, [sp, #\ep]
	bne	.Lbias_c
	ldr	r12, [r12]
	tst	r12, #STEP_PARTIAL
	ldr	r12, [sp, #\ep]
	bne	.Lpartial
	.endm

/* BIAS, accumulate = 1 (r12 = ep): the bias row added to every C row (before any reordering of the kernel's);
 * .Ladd_bias adds the bias row in q0-q1. */
	.macro	bias_c ldc
.Lbias_c:
	ldr	r12, [r12, #ISF_EP_BIAS]
	vld1.32	{d0-d3}, [r12]
	ldr	r12, [sp, #\ldc]
	lsl	r12, r12, #2
	load_c
.Ladd_bias:
	by_column	vadd.i32, q0, q1
	.endm

/* PARTIAL (r12 = ep), accumulate = 0: the accumulators start from the partial rows, + the bias row if asked
 * (.Ladd_bias), then \done with r12 = ldc in bytes. */
	.macro	partial ldc, done
.Lpartial:
	/* r0-r3 are still the arguments: two more registers for the rows' pointer and stride */
	push	{r4, r5}
	ldr	r4, [r12, #ISF_EP_PARTIAL]
	ldr	r5, [r12, #ISF_EP_PARTIAL_LD]
	lsl	r5, r5, #2
	tile_rows	vld1.32, r4, r5, 0
	ldr	r5, [r12]
	ldr	r4, [r12, #ISF_EP_BIAS]
	tst	r5, #STEP_BIAS
	beq	.Lpartial_done
	vld1.32	{d0-d3}, [r4]
	/* the flags of the BIAS test survive: pop, ldr and lsl (no s) leave them */
.Lpartial_done:
	pop	{r4, r5}
	ldr	r12, [sp, #\ldc]
	lsl	r12, r12, #2
	bne	.Ladd_bias
	b	\done
	.endm

/* The quantized store (r0 = ep, r1 = steps, r12 = ldc * 4; the tile in row order), each step over the whole tile
 * in place, its parameters in q0-q3: ROW_OFFSET as vmla by the row's scalar, then vcvt to fp32, the scales as
 * separate vmul (never a fused multiply-add: the contract's separate roundings), the clamp as vmax then vmin.
 * TO_S8 rounds with vcvtn (nearest, ties to even, saturating), then saturating zero point and narrowing to int8
 * and the int8 clamp: exact, as the contract asks. The fp32 tile leaves through .Lstore_rows. */
	.macro	quantized_store saved
	/* ROW_OFFSET: row i += row_offset[i] * col_sum, int32 wrapping */
.Lquantized:
	tst	r1, #STEP_ROW_OFFSET
	beq	.Lconvert
	ldr	r2, [r0, #ISF_EP_ROW_OFFSET]
	vld1.32	{d0-d1}, [r2]
	ldr	r2, [r0, #ISF_EP_COL_SUM]
	vld1.32	{d4-d7}, [r2]
	vmla.i32	q8, q2, d0[0]
	vmla.i32	q9, q3, d0[0]
	vmla.i32	q10, q2, d0[1]
	vmla.i32	q11, q3, d0[1]
	vmla.i32	q12, q2, d1[0]
	vmla.i32	q13, q3, d1[0]
	vmla.i32	q14, q2, d1[1]
	vmla.i32	q15, q3, d1[1]
	/* ROW_OFFSET alone keeps the int32 store */
.Lconvert:
	tst	r1, #(STEP_TO_F32 | STEP_TO_S8)
	beq	.Lstore_rows
	each	vcvt.f32.s32
	ldr	r2, [r0, #ISF_EP_COL_SCALE]
	vld1.32	{d4-d7}, [r2]
	tst	r1, #STEP_TO_S8
	bne	.Lto_s8
	/* TO_F32: the row scale (when asked) rounds before the column scale, as the contract orders them */
	tst	r1, #STEP_ROW_SCALE
	beq	.Lcol_scale
	ldr	r2, [r0, #ISF_EP_ROW_SCALE]
	vld1.32	{d0-d1}, [r2]
	by_row	vmul.f32
.Lcol_scale:
	by_column	vmul.f32, q2, q3
	tst	r1, #STEP_OUT_BIAS
	beq	.Lclamp
	ldr	r2, [r0, #ISF_EP_OUT_BIAS]
	vld1.32	{d4-d7}, [r2]
	by_column	vadd.f32, q2, q3
.Lclamp:
	tst	r1, #STEP_CLAMP
	beq	.Lstore_rows
	ldr	r2, [r0, #ISF_EP_MIN]
	vdup.32	q2, r2
	ldr	r2, [r0, #ISF_EP_MAX]
	vdup.32	q3, r2
	clamp	q2, q3
	b	.Lstore_rows
	/* TO_S8: (float)r * col_scale, nearest even (saturating to int32), + zero point and narrowing to int8, all
	 * saturating, then the int8 clamp: exactly clamp(rne(f) + out_zp, qmin, qmax) in unbounded integers */
.Lto_s8:
	by_column	vmul.f32, q2, q3
	each	vcvtn.s32.f32
	ldr	r2, [r0, #ISF_EP_OUT_ZP]
	vdup.32	q0, r2
	each	vqadd.s32, q0
	/* row r ends in d(16 + r): narrowed through q0-q1 so no narrowing overlaps its own source */
	vqmovn.s32	d0, q8
	vqmovn.s32	d1, q9
	vqmovn.s32	d2, q10
	vqmovn.s32	d3, q11
	vqmovn.s16	d16, q0
	vqmovn.s16	d17, q1
	vqmovn.s32	d0, q12
	vqmovn.s32	d1, q13
	vqmovn.s32	d2, q14
	vqmovn.s32	d3, q15
	vqmovn.s16	d18, q0
	vqmovn.s16	d19, q1
	ldr	r2, [r0, #ISF_EP_QMIN]
	vdup.8	q0, r2
	ldr	r2, [r0, #ISF_EP_QMAX]
	vdup.8	q1, r2
	vmax.s8	q8, q8, q0
	vmax.s8	q9, q9, q0
	vmin.s8	q8, q8, q1
	vmin.s8	q9, q9, q1
	/* int8 C: ldc bytes between rows, 8 bytes each */
	lsr	r12, r12, #2
	vst1.8	{d16}, [r3], r12
	vst1.8	{d17}, [r3], r12
	vst1.8	{d18}, [r3], r12
	vst1.8	{d19}, [r3]
	vpop	{\saved}
	bx	lr
	.endm

/* clang-format on */
#endif
