/* gemm_s8_8x12x4_dotprod
 *
 * int8 -> int32 GEMM micro-kernel: 8x12 tile, sdot by element, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements,
 * w5 accumulate, x6 epilogue: BIAS, PARTIAL and the quantized outputs; CLAMP only with TO_F32).
 *
 * Per block A is 32 bytes (two vectors: rows 0-3, rows 4-7, one row's 4 k values per 32-bit lane) and B 48 bytes
 * (b0-b2 in v2-v4, one column's 4 k values per lane). c(r, 4j..4j+3) lives in v(8 + 3r + j): v8-v31, 24
 * accumulators, so a C row is three consecutive registers (one ld1/st1); accumulate = 1 starts them from C
 * (exact in int32). The BIAS step starts them from the bias row too (from C + bias with accumulate = 1): int32
 * addition wraps modulo 2^32, so adding it first gives the bits the contract's sums + C + bias does, and on the
 * accumulate = 0 path it costs one load instead of 24 additions at the store. PARTIAL starts them from the
 * partial rows the same way (then BIAS on top), so the k loop never knows.
 *
 * Software pipelining: A is double-buffered (v0, v1 / v5, v6; the loop is unrolled twice: E computes with v0, v1
 * and loads the next block's A into v5, v6 first thing, O the other way round). The sdot run column by column
 * (b0 for all 8 rows, then b1, then b2), so b0 and b1 are reloaded together (ldp) once b1's column is done and
 * b2 after its own: every load is at least 8 sdot ahead of its first use. The last block is peeled (no loads),
 * so nothing past the panels is read. k_blocks odd enters at E with A in v0, v1, even at O with A in v5, v6; the
 * loop runs k_blocks / 2 times.
 *
 * The quantized outputs (TO_F32, TO_S8) leave the int32 store for .Lquantized: every step runs on the whole
 * tile in place, v8-v31, with its column vectors in v0-v2 and its row values in v3, v4 (lane i & 3 of v3 for rows
 * 0-3, of v4 for 4-7), each loaded once per tile; the fp32 tile then goes out through the int32 store (same
 * layout, same ldc in bytes), the int8 one row by row (12 bytes: a d and an s store). The fp32 steps are
 * separate fmul/fadd, never fmla: one rounding each, as the contract says. TO_S8 is fcvtns (to nearest, ties to
 * even, saturating), sqadd out_zp, sqxtn twice, then smax/smin qmin/qmax: exact, since each saturation keeps the
 * order and the int8 clamp lies inside every range on the way.
 */

#include "isf_epilogue_offsets.h"

/* Bits of isf_epilogue.steps (ISF_EPILOGUE_* in isf_internal.h, which .S files cannot include). */
#define STEP_BIAS 0
#define STEP_CLAMP 1
#define STEP_PARTIAL 2
#define STEP_ROW_OFFSET 3
#define STEP_TO_F32 4
#define STEP_ROW_SCALE 5
#define STEP_OUT_BIAS 6
#define STEP_TO_S8 7

/* The 8 rows of the tile from memory \stride bytes apart (C on accumulate, the partial sums for PARTIAL). */
	.macro	load_tile src, stride
	ld1	{v8.4s, v9.4s, v10.4s}, [\src], \stride
	ld1	{v11.4s, v12.4s, v13.4s}, [\src], \stride
	ld1	{v14.4s, v15.4s, v16.4s}, [\src], \stride
	ld1	{v17.4s, v18.4s, v19.4s}, [\src], \stride
	ld1	{v20.4s, v21.4s, v22.4s}, [\src], \stride
	ld1	{v23.4s, v24.4s, v25.4s}, [\src], \stride
	ld1	{v26.4s, v27.4s, v28.4s}, [\src], \stride
	ld1	{v29.4s, v30.4s, v31.4s}, [\src], \stride
	.endm

/* v\r = op(v\r), or v\r = v\r op \v: one accumulator. */
	.macro	one op, r, v
	.ifb	\v
	\op	v\r\().4s, v\r\().4s
	.else
	\op	v\r\().4s, v\r\().4s, \v\().4s
	.endif
	.endm

/* One step on all 24 accumulators: with \v, acc = acc op \v. (The .irp goes through `one`: inside a macro the
 * \() that ends \r would be taken by the macro, and \r.4s read as one name.) */
	.macro	each op, v
	.irp	r, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	one	\op, \r, \v
	.endr
	.endm

/* acc = acc op column vector, on all 24 accumulators (the columns' values in v0-v2). */
	.macro	by_column op
	.irp	r, 8, 11, 14, 17, 20, 23, 26, 29
	one	\op, \r, v0
	.endr
	.irp	r, 9, 12, 15, 18, 21, 24, 27, 30
	one	\op, \r, v1
	.endr
	.irp	r, 10, 13, 16, 19, 22, 25, 28, 31
	one	\op, \r, v2
	.endr
	.endm

/* ROW_OFFSET on row (\a, \b, \c): += col_sum (v0-v2) times the row's offset, lane \i of \v. */
	.macro	row_mla a, b, c, v, i
	mla	v\a\().4s, v0.4s, \v\().s[\i]
	mla	v\b\().4s, v1.4s, \v\().s[\i]
	mla	v\c\().4s, v2.4s, \v\().s[\i]
	.endm

/* ROW_SCALE on row (\a, \b, \c): *= the row's scale, lane \i of \v. */
	.macro	row_fmul a, b, c, v, i
	fmul	v\a\().4s, v\a\().4s, \v\().s[\i]
	fmul	v\b\().4s, v\b\().4s, \v\().s[\i]
	fmul	v\c\().4s, v\c\().4s, \v\().s[\i]
	.endm

/* One TO_S8 row: int32 (\a, \b, \c, zero point added) to 12 saturated bytes, clamped to qmin (v3), qmax (v4),
 * stored at x3 (bytes 0-7) and x9 = x3 + 8 (8-11), both then a row on. */
	.macro	row_s8 a, b, c
	sqxtn	v1.4h, v\a\().4s
	sqxtn2	v1.8h, v\b\().4s
	sqxtn	v2.4h, v\c\().4s
	sqxtn	v1.8b, v1.8h
	sqxtn2	v1.16b, v2.8h
	smax	v1.16b, v1.16b, v3.16b
	smin	v1.16b, v1.16b, v4.16b
	st1	{v1.8b}, [x3], x4
	st1	{v1.s}[2], [x9], x4
	.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_8x12x4_dotprod
	.type	isf_ukernel_gemm_s8_8x12x4_dotprod, %function
isf_ukernel_gemm_s8_8x12x4_dotprod:
	// save d8-d15 (AAPCS64: callee-saved low halves); x4 = ldc in bytes
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	lsl	x4, x4, #2
	ldr	w10, [x6, #ISF_EP_STEPS]
	cbz	w5, .Lzero
	// accumulate = 1: the accumulators start from C
	mov	x9, x3
	load_tile	x9, x4
	tbnz	w10, #STEP_BIAS, .Lbias_c
	cbnz	x0, .Lstart
	b	.Lstore
	// accumulate = 0: the accumulators start at zero
.Lzero:
	tbnz	w10, #STEP_PARTIAL, .Lpartial
	tbnz	w10, #STEP_BIAS, .Lbias
	movi	v8.16b, #0
	movi	v9.16b, #0
	movi	v10.16b, #0
	movi	v11.16b, #0
	movi	v12.16b, #0
	movi	v13.16b, #0
	movi	v14.16b, #0
	movi	v15.16b, #0
	movi	v16.16b, #0
	movi	v17.16b, #0
	movi	v18.16b, #0
	movi	v19.16b, #0
	movi	v20.16b, #0
	movi	v21.16b, #0
	movi	v22.16b, #0
	movi	v23.16b, #0
	movi	v24.16b, #0
	movi	v25.16b, #0
	movi	v26.16b, #0
	movi	v27.16b, #0
	movi	v28.16b, #0
	movi	v29.16b, #0
	movi	v30.16b, #0
	movi	v31.16b, #0
	cbz	x0, .Lsums
	// first block into registers; k_blocks odd enters the loop at E, even at O
.Lstart:
	ld1	{v2.16b, v3.16b, v4.16b}, [x2], #48
	tbz	x0, #0, .Leven
	ld1	{v0.16b, v1.16b}, [x1], #32
	lsr	x0, x0, #1
	cbz	x0, .Lfinal
	// isf-hot-loop-begin
	// E: compute the block in the first register set, load the next block
.Lloop:
	ld1	{v5.16b, v6.16b}, [x1], #32
	sdot	v8.4s, v2.16b, v0.4b[0]
	sdot	v11.4s, v2.16b, v0.4b[1]
	sdot	v14.4s, v2.16b, v0.4b[2]
	sdot	v17.4s, v2.16b, v0.4b[3]
	sdot	v20.4s, v2.16b, v1.4b[0]
	sdot	v23.4s, v2.16b, v1.4b[1]
	sdot	v26.4s, v2.16b, v1.4b[2]
	sdot	v29.4s, v2.16b, v1.4b[3]
	sdot	v9.4s, v3.16b, v0.4b[0]
	sdot	v12.4s, v3.16b, v0.4b[1]
	sdot	v15.4s, v3.16b, v0.4b[2]
	sdot	v18.4s, v3.16b, v0.4b[3]
	sdot	v21.4s, v3.16b, v1.4b[0]
	sdot	v24.4s, v3.16b, v1.4b[1]
	sdot	v27.4s, v3.16b, v1.4b[2]
	sdot	v30.4s, v3.16b, v1.4b[3]
	ldp	q2, q3, [x2], #48
	sdot	v10.4s, v4.16b, v0.4b[0]
	sdot	v13.4s, v4.16b, v0.4b[1]
	sdot	v16.4s, v4.16b, v0.4b[2]
	sdot	v19.4s, v4.16b, v0.4b[3]
	sdot	v22.4s, v4.16b, v1.4b[0]
	sdot	v25.4s, v4.16b, v1.4b[1]
	sdot	v28.4s, v4.16b, v1.4b[2]
	sdot	v31.4s, v4.16b, v1.4b[3]
	ldur	q4, [x2, #-16]
	// O: the same with the second register set
.Lmid:
	ld1	{v0.16b, v1.16b}, [x1], #32
	sdot	v8.4s, v2.16b, v5.4b[0]
	sdot	v11.4s, v2.16b, v5.4b[1]
	sdot	v14.4s, v2.16b, v5.4b[2]
	sdot	v17.4s, v2.16b, v5.4b[3]
	sdot	v20.4s, v2.16b, v6.4b[0]
	sdot	v23.4s, v2.16b, v6.4b[1]
	sdot	v26.4s, v2.16b, v6.4b[2]
	sdot	v29.4s, v2.16b, v6.4b[3]
	sdot	v9.4s, v3.16b, v5.4b[0]
	sdot	v12.4s, v3.16b, v5.4b[1]
	sdot	v15.4s, v3.16b, v5.4b[2]
	sdot	v18.4s, v3.16b, v5.4b[3]
	sdot	v21.4s, v3.16b, v6.4b[0]
	sdot	v24.4s, v3.16b, v6.4b[1]
	sdot	v27.4s, v3.16b, v6.4b[2]
	sdot	v30.4s, v3.16b, v6.4b[3]
	ldp	q2, q3, [x2], #48
	sdot	v10.4s, v4.16b, v5.4b[0]
	sdot	v13.4s, v4.16b, v5.4b[1]
	sdot	v16.4s, v4.16b, v5.4b[2]
	sdot	v19.4s, v4.16b, v5.4b[3]
	sdot	v22.4s, v4.16b, v6.4b[0]
	sdot	v25.4s, v4.16b, v6.4b[1]
	sdot	v28.4s, v4.16b, v6.4b[2]
	sdot	v31.4s, v4.16b, v6.4b[3]
	ldur	q4, [x2, #-16]
	subs	x0, x0, #1
	b.ne	.Lloop
	// isf-hot-loop-end
	// last block: compute only, nothing past the panels is read
.Lfinal:
	sdot	v8.4s, v2.16b, v0.4b[0]
	sdot	v11.4s, v2.16b, v0.4b[1]
	sdot	v14.4s, v2.16b, v0.4b[2]
	sdot	v17.4s, v2.16b, v0.4b[3]
	sdot	v20.4s, v2.16b, v1.4b[0]
	sdot	v23.4s, v2.16b, v1.4b[1]
	sdot	v26.4s, v2.16b, v1.4b[2]
	sdot	v29.4s, v2.16b, v1.4b[3]
	sdot	v9.4s, v3.16b, v0.4b[0]
	sdot	v12.4s, v3.16b, v0.4b[1]
	sdot	v15.4s, v3.16b, v0.4b[2]
	sdot	v18.4s, v3.16b, v0.4b[3]
	sdot	v21.4s, v3.16b, v1.4b[0]
	sdot	v24.4s, v3.16b, v1.4b[1]
	sdot	v27.4s, v3.16b, v1.4b[2]
	sdot	v30.4s, v3.16b, v1.4b[3]
	sdot	v10.4s, v4.16b, v0.4b[0]
	sdot	v13.4s, v4.16b, v0.4b[1]
	sdot	v16.4s, v4.16b, v0.4b[2]
	sdot	v19.4s, v4.16b, v0.4b[3]
	sdot	v22.4s, v4.16b, v1.4b[0]
	sdot	v25.4s, v4.16b, v1.4b[1]
	sdot	v28.4s, v4.16b, v1.4b[2]
	sdot	v31.4s, v4.16b, v1.4b[3]
	// the tile's int32 sums are done: a quantized output converts them first
.Lsums:
	tbnz	w10, #STEP_TO_F32, .Lquantized
	tbnz	w10, #STEP_TO_S8, .Lquantized
	// write the MRxNR tile, row stride ldc
.Lstore:
	st1	{v8.4s, v9.4s, v10.4s}, [x3], x4
	st1	{v11.4s, v12.4s, v13.4s}, [x3], x4
	st1	{v14.4s, v15.4s, v16.4s}, [x3], x4
	st1	{v17.4s, v18.4s, v19.4s}, [x3], x4
	st1	{v20.4s, v21.4s, v22.4s}, [x3], x4
	st1	{v23.4s, v24.4s, v25.4s}, [x3], x4
	st1	{v26.4s, v27.4s, v28.4s}, [x3], x4
	st1	{v29.4s, v30.4s, v31.4s}, [x3], x4
.Lreturn:
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	// k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	ld1	{v5.16b, v6.16b}, [x1], #32
	lsr	x0, x0, #1
	b	.Lmid
	// BIAS, accumulate = 0: every row starts from the bias row
.Lbias:
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld1	{v8.4s, v9.4s, v10.4s}, [x9]
	mov	v11.16b, v8.16b
	mov	v12.16b, v9.16b
	mov	v13.16b, v10.16b
	mov	v14.16b, v8.16b
	mov	v15.16b, v9.16b
	mov	v16.16b, v10.16b
	mov	v17.16b, v8.16b
	mov	v18.16b, v9.16b
	mov	v19.16b, v10.16b
	mov	v20.16b, v8.16b
	mov	v21.16b, v9.16b
	mov	v22.16b, v10.16b
	mov	v23.16b, v8.16b
	mov	v24.16b, v9.16b
	mov	v25.16b, v10.16b
	mov	v26.16b, v8.16b
	mov	v27.16b, v9.16b
	mov	v28.16b, v10.16b
	mov	v29.16b, v8.16b
	mov	v30.16b, v9.16b
	mov	v31.16b, v10.16b
	cbz	x0, .Lsums
	b	.Lstart
	// BIAS, accumulate = 1: the bias row added to every C row
.Lbias_c:
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld1	{v0.4s, v1.4s, v2.4s}, [x9]
	add	v8.4s, v8.4s, v0.4s
	add	v9.4s, v9.4s, v1.4s
	add	v10.4s, v10.4s, v2.4s
	add	v11.4s, v11.4s, v0.4s
	add	v12.4s, v12.4s, v1.4s
	add	v13.4s, v13.4s, v2.4s
	add	v14.4s, v14.4s, v0.4s
	add	v15.4s, v15.4s, v1.4s
	add	v16.4s, v16.4s, v2.4s
	add	v17.4s, v17.4s, v0.4s
	add	v18.4s, v18.4s, v1.4s
	add	v19.4s, v19.4s, v2.4s
	add	v20.4s, v20.4s, v0.4s
	add	v21.4s, v21.4s, v1.4s
	add	v22.4s, v22.4s, v2.4s
	add	v23.4s, v23.4s, v0.4s
	add	v24.4s, v24.4s, v1.4s
	add	v25.4s, v25.4s, v2.4s
	add	v26.4s, v26.4s, v0.4s
	add	v27.4s, v27.4s, v1.4s
	add	v28.4s, v28.4s, v2.4s
	add	v29.4s, v29.4s, v0.4s
	add	v30.4s, v30.4s, v1.4s
	add	v31.4s, v31.4s, v2.4s
	cbnz	x0, .Lstart
	b	.Lsums
	// PARTIAL (accumulate = 0): the accumulators start from the partial rows, partial_ld int32 apart, then BIAS
.Lpartial:
	ldr	x9, [x6, #ISF_EP_PARTIAL]
	ldr	w11, [x6, #ISF_EP_PARTIAL_LD]
	lsl	x11, x11, #2
	load_tile	x9, x11
	tbnz	w10, #STEP_BIAS, .Lbias_c
	cbnz	x0, .Lstart
	b	.Lsums
	// TO_F32 or TO_S8: ROW_OFFSET in int32, then to fp32 and the scales
.Lquantized:
	tbz	w10, #STEP_ROW_OFFSET, .Lconvert
	ldr	x9, [x6, #ISF_EP_COL_SUM]
	ld1	{v0.4s, v1.4s, v2.4s}, [x9]
	ldr	x9, [x6, #ISF_EP_ROW_OFFSET]
	ld1	{v3.4s, v4.4s}, [x9]
	row_mla	8, 9, 10, v3, 0
	row_mla	11, 12, 13, v3, 1
	row_mla	14, 15, 16, v3, 2
	row_mla	17, 18, 19, v3, 3
	row_mla	20, 21, 22, v4, 0
	row_mla	23, 24, 25, v4, 1
	row_mla	26, 27, 28, v4, 2
	row_mla	29, 30, 31, v4, 3
.Lconvert:
	each	scvtf
	// ROW_SCALE belongs to TO_F32 (TO_F32 wins if both outputs are set, as in the scalar definition)
	tbz	w10, #STEP_TO_F32, .Lcol_scale
	tbz	w10, #STEP_ROW_SCALE, .Lcol_scale
	ldr	x9, [x6, #ISF_EP_ROW_SCALE]
	ld1	{v3.4s, v4.4s}, [x9]
	row_fmul	8, 9, 10, v3, 0
	row_fmul	11, 12, 13, v3, 1
	row_fmul	14, 15, 16, v3, 2
	row_fmul	17, 18, 19, v3, 3
	row_fmul	20, 21, 22, v4, 0
	row_fmul	23, 24, 25, v4, 1
	row_fmul	26, 27, 28, v4, 2
	row_fmul	29, 30, 31, v4, 3
.Lcol_scale:
	ldr	x9, [x6, #ISF_EP_COL_SCALE]
	ld1	{v0.4s, v1.4s, v2.4s}, [x9]
	by_column	fmul
	tbz	w10, #STEP_TO_F32, .Lto_s8
	tbz	w10, #STEP_OUT_BIAS, .Lclamp
	ldr	x9, [x6, #ISF_EP_OUT_BIAS]
	ld1	{v0.4s, v1.4s, v2.4s}, [x9]
	by_column	fadd
.Lclamp:
	tbz	w10, #STEP_CLAMP, .Lstore
	add	x9, x6, #ISF_EP_MIN
	ld2r	{v5.4s, v6.4s}, [x9]
	each	fmax, v5
	each	fmin, v6
	b	.Lstore
	// TO_S8: C is int8, ldc in bytes
.Lto_s8:
	lsr	x4, x4, #2
	each	fcvtns
	ldr	w9, [x6, #ISF_EP_OUT_ZP]
	dup	v0.4s, w9
	each	sqadd, v0
	ldp	w9, w11, [x6, #ISF_EP_QMIN]
	dup	v3.16b, w9
	dup	v4.16b, w11
	add	x9, x3, #8
	row_s8	8, 9, 10
	row_s8	11, 12, 13
	row_s8	14, 15, 16
	row_s8	17, 18, 19
	row_s8	20, 21, 22
	row_s8	23, 24, 25
	row_s8	26, 27, 28
	row_s8	29, 30, 31
	b	.Lreturn
	.size	isf_ukernel_gemm_s8_8x12x4_dotprod, .-isf_ukernel_gemm_s8_8x12x4_dotprod

	.section	.note.GNU-stack,"",%progbits
