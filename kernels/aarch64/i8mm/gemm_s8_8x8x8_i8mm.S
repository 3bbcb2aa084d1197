/* gemm_s8_8x8x8_i8mm
 *
 * int8 -> int32 GEMM micro-kernel: 8x8 tile, smmla, 8 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements,
 * w5 accumulate, x6 epilogue: BIAS, PARTIAL and the quantized outputs; CLAMP only with TO_F32).
 *
 * Per block A is 64 bytes (a<i>: rows 2i, 2i+1 x 8 k) and B 64 bytes (b<j>: columns 2j, 2j+1 x 8 k): exactly
 * smmla's operands. v(8 + 4i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out
 * [r0c0 r0c1 r1c0 r1c1]; zip1/zip2 (load, accumulate = 1: exact in int32) and uzp1/uzp2 (store) on 64-bit lanes
 * convert between row pairs and blocks. The BIAS step starts the accumulators from the bias (added to C with
 * accumulate = 1): int32 addition wraps modulo 2^32, so adding it first gives the bits the contract's
 * sums + C + bias does, and on the accumulate = 0 path it costs a load instead of 16 additions at the store. In
 * block order the bias of columns 2j, 2j+1 is the 64-bit pair bias[2j..2j+1] in both halves: one ld4r.
 * PARTIAL starts them from the partial rows as accumulate = 1 does from C (zip1/zip2), then BIAS on top.
 *
 * Software pipelining: 16 accumulators leave room to double-buffer both panels (set 0: A v0-v3, B v4-v7; set 1:
 * A v24-v27, B v28-v31), one 4-register ld1 per panel and block. The loop is unrolled twice (E computes set 0
 * and loads set 1, O the other way round); the last block is peeled (no loads), so nothing past the panels is
 * read. k_blocks odd enters at E with set 0 loaded, even at O with set 1; the loop runs k_blocks / 2 times.
 *
 * The quantized outputs (TO_F32, TO_S8) leave the int32 store for .Lquantized, which first un-interleaves the
 * blocks into rows (uzp1/uzp2, as the store does): row i in v(16 + 2i), v(17 + 2i), rows 4-7 first so that no
 * block is overwritten before it is read. Every step then runs on the whole tile in place, its column vectors in
 * v0, v1 and its row values in v2, v3 (lane i & 3 of v2 for rows 0-3, of v3 for 4-7), each loaded once per tile.
 * The fp32 steps are separate fmul/fadd, never fmla: one rounding each, as the contract says. TO_S8 is fcvtns
 * (to nearest, ties to even, saturating), sqadd out_zp, sqxtn twice, then smax/smin qmin/qmax: exact, since each
 * saturation keeps the order and the int8 clamp lies inside every range on the way; two rows share a vector, one
 * 8-byte store each.
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

/* Four rows from memory \stride bytes apart into the blocks \b0-\b3 (C on accumulate, the partial sums for
 * PARTIAL); v0-v3 are scratch. */
	.macro	load_blocks src, stride, b0, b1, b2, b3
	ld1	{v0.4s, v1.4s}, [\src], \stride
	ld1	{v2.4s, v3.4s}, [\src], \stride
	zip1	v\b0\().2d, v0.2d, v2.2d
	zip2	v\b1\().2d, v0.2d, v2.2d
	zip1	v\b2\().2d, v1.2d, v3.2d
	zip2	v\b3\().2d, v1.2d, v3.2d
	.endm

/* v\r = op(v\r), or v\r = v\r op \v: one row vector. */
	.macro	one op, r, v
	.ifb	\v
	\op	v\r\().4s, v\r\().4s
	.else
	\op	v\r\().4s, v\r\().4s, \v\().4s
	.endif
	.endm

/* One step on all 16 row vectors: with \v, acc = acc op \v. (The .irp goes through `one`: inside a macro the
 * \() that ends \r would be taken by the macro, and \r.4s read as one name.) */
	.macro	each op, v
	.irp	r, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	one	\op, \r, \v
	.endr
	.endm

/* acc = acc op column vector, on all 16 row vectors (the columns' values in v0, v1). */
	.macro	by_column op
	.irp	r, 16, 18, 20, 22, 24, 26, 28, 30
	one	\op, \r, v0
	.endr
	.irp	r, 17, 19, 21, 23, 25, 27, 29, 31
	one	\op, \r, v1
	.endr
	.endm

/* The blocks \b0-\b3 of rows 2p, 2p+1 to the rows: \r0, \r1 row 2p (columns 0-3, 4-7), \r2, \r3 row 2p+1. */
	.macro	unzip b0, b1, b2, b3, r0, r1, r2, r3
	uzp1	v\r0\().2d, v\b0\().2d, v\b1\().2d
	uzp1	v\r1\().2d, v\b2\().2d, v\b3\().2d
	uzp2	v\r2\().2d, v\b0\().2d, v\b1\().2d
	uzp2	v\r3\().2d, v\b2\().2d, v\b3\().2d
	.endm

/* ROW_OFFSET on row (\a, \b): += col_sum (v0, v1) times the row's offset, lane \i of \v. */
	.macro	row_mla a, b, v, i
	mla	v\a\().4s, v0.4s, \v\().s[\i]
	mla	v\b\().4s, v1.4s, \v\().s[\i]
	.endm

/* ROW_SCALE on row (\a, \b): *= the row's scale, lane \i of \v. */
	.macro	row_fmul a, b, v, i
	fmul	v\a\().4s, v\a\().4s, \v\().s[\i]
	fmul	v\b\().4s, v\b\().4s, \v\().s[\i]
	.endm

/* Two TO_S8 rows: int32 (\a, \b), (\c, \d), zero point added, to 8 saturated bytes each, clamped to qmin (v3),
 * qmax (v4), stored at x3 a row apart. */
	.macro	rows_s8 a, b, c, d
	sqxtn	v1.4h, v\a\().4s
	sqxtn2	v1.8h, v\b\().4s
	sqxtn	v2.4h, v\c\().4s
	sqxtn2	v2.8h, v\d\().4s
	sqxtn	v1.8b, v1.8h
	sqxtn2	v1.16b, v2.8h
	smax	v1.16b, v1.16b, v3.16b
	smin	v1.16b, v1.16b, v4.16b
	st1	{v1.d}[0], [x3], x4
	st1	{v1.d}[1], [x3], x4
	.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_8x8x8_i8mm
	.type	isf_ukernel_gemm_s8_8x8x8_i8mm, %function
isf_ukernel_gemm_s8_8x8x8_i8mm:
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
	load_blocks	x9, x4, 8, 9, 10, 11
	load_blocks	x9, x4, 12, 13, 14, 15
	load_blocks	x9, x4, 16, 17, 18, 19
	load_blocks	x9, x4, 20, 21, 22, 23
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
	cbz	x0, .Lsums
	// first block into registers; k_blocks odd enters the loop at E, even at O
.Lstart:
	tbz	x0, #0, .Leven
	ld1	{v0.16b, v1.16b, v2.16b, v3.16b}, [x1], #64
	ld1	{v4.16b, v5.16b, v6.16b, v7.16b}, [x2], #64
	lsr	x0, x0, #1
	cbz	x0, .Lfinal
	// isf-hot-loop-begin
	// E: compute the block in the first register set, load the next block
.Lloop:
	ld1	{v24.16b, v25.16b, v26.16b, v27.16b}, [x1], #64
	smmla	v8.4s, v0.16b, v4.16b
	smmla	v9.4s, v0.16b, v5.16b
	smmla	v10.4s, v0.16b, v6.16b
	smmla	v11.4s, v0.16b, v7.16b
	smmla	v12.4s, v1.16b, v4.16b
	smmla	v13.4s, v1.16b, v5.16b
	smmla	v14.4s, v1.16b, v6.16b
	smmla	v15.4s, v1.16b, v7.16b
	ld1	{v28.16b, v29.16b, v30.16b, v31.16b}, [x2], #64
	smmla	v16.4s, v2.16b, v4.16b
	smmla	v17.4s, v2.16b, v5.16b
	smmla	v18.4s, v2.16b, v6.16b
	smmla	v19.4s, v2.16b, v7.16b
	smmla	v20.4s, v3.16b, v4.16b
	smmla	v21.4s, v3.16b, v5.16b
	smmla	v22.4s, v3.16b, v6.16b
	smmla	v23.4s, v3.16b, v7.16b
	// O: the same with the second register set
.Lmid:
	ld1	{v0.16b, v1.16b, v2.16b, v3.16b}, [x1], #64
	smmla	v8.4s, v24.16b, v28.16b
	smmla	v9.4s, v24.16b, v29.16b
	smmla	v10.4s, v24.16b, v30.16b
	smmla	v11.4s, v24.16b, v31.16b
	smmla	v12.4s, v25.16b, v28.16b
	smmla	v13.4s, v25.16b, v29.16b
	smmla	v14.4s, v25.16b, v30.16b
	smmla	v15.4s, v25.16b, v31.16b
	ld1	{v4.16b, v5.16b, v6.16b, v7.16b}, [x2], #64
	smmla	v16.4s, v26.16b, v28.16b
	smmla	v17.4s, v26.16b, v29.16b
	smmla	v18.4s, v26.16b, v30.16b
	smmla	v19.4s, v26.16b, v31.16b
	smmla	v20.4s, v27.16b, v28.16b
	smmla	v21.4s, v27.16b, v29.16b
	smmla	v22.4s, v27.16b, v30.16b
	smmla	v23.4s, v27.16b, v31.16b
	subs	x0, x0, #1
	b.ne	.Lloop
	// isf-hot-loop-end
	// last block: compute only, nothing past the panels is read
.Lfinal:
	smmla	v8.4s, v0.16b, v4.16b
	smmla	v9.4s, v0.16b, v5.16b
	smmla	v10.4s, v0.16b, v6.16b
	smmla	v11.4s, v0.16b, v7.16b
	smmla	v12.4s, v1.16b, v4.16b
	smmla	v13.4s, v1.16b, v5.16b
	smmla	v14.4s, v1.16b, v6.16b
	smmla	v15.4s, v1.16b, v7.16b
	smmla	v16.4s, v2.16b, v4.16b
	smmla	v17.4s, v2.16b, v5.16b
	smmla	v18.4s, v2.16b, v6.16b
	smmla	v19.4s, v2.16b, v7.16b
	smmla	v20.4s, v3.16b, v4.16b
	smmla	v21.4s, v3.16b, v5.16b
	smmla	v22.4s, v3.16b, v6.16b
	smmla	v23.4s, v3.16b, v7.16b
	// the tile's int32 sums are done: a quantized output converts them first
.Lsums:
	tbnz	w10, #STEP_TO_F32, .Lquantized
	tbnz	w10, #STEP_TO_S8, .Lquantized
	// write the MRxNR tile, row stride ldc
.Lstore:
	uzp1	v0.2d, v8.2d, v9.2d
	uzp1	v1.2d, v10.2d, v11.2d
	uzp2	v2.2d, v8.2d, v9.2d
	uzp2	v3.2d, v10.2d, v11.2d
	st1	{v0.4s, v1.4s}, [x3], x4
	st1	{v2.4s, v3.4s}, [x3], x4
	uzp1	v0.2d, v12.2d, v13.2d
	uzp1	v1.2d, v14.2d, v15.2d
	uzp2	v2.2d, v12.2d, v13.2d
	uzp2	v3.2d, v14.2d, v15.2d
	st1	{v0.4s, v1.4s}, [x3], x4
	st1	{v2.4s, v3.4s}, [x3], x4
	uzp1	v0.2d, v16.2d, v17.2d
	uzp1	v1.2d, v18.2d, v19.2d
	uzp2	v2.2d, v16.2d, v17.2d
	uzp2	v3.2d, v18.2d, v19.2d
	st1	{v0.4s, v1.4s}, [x3], x4
	st1	{v2.4s, v3.4s}, [x3], x4
	uzp1	v0.2d, v20.2d, v21.2d
	uzp1	v1.2d, v22.2d, v23.2d
	uzp2	v2.2d, v20.2d, v21.2d
	uzp2	v3.2d, v22.2d, v23.2d
	st1	{v0.4s, v1.4s}, [x3], x4
	st1	{v2.4s, v3.4s}, [x3], x4
.Lreturn:
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	// k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	ld1	{v24.16b, v25.16b, v26.16b, v27.16b}, [x1], #64
	ld1	{v28.16b, v29.16b, v30.16b, v31.16b}, [x2], #64
	lsr	x0, x0, #1
	b	.Lmid
	// BIAS, accumulate = 0: every row pair starts from the bias
.Lbias:
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld4r	{v8.2d, v9.2d, v10.2d, v11.2d}, [x9]
	mov	v12.16b, v8.16b
	mov	v13.16b, v9.16b
	mov	v14.16b, v10.16b
	mov	v15.16b, v11.16b
	mov	v16.16b, v8.16b
	mov	v17.16b, v9.16b
	mov	v18.16b, v10.16b
	mov	v19.16b, v11.16b
	mov	v20.16b, v8.16b
	mov	v21.16b, v9.16b
	mov	v22.16b, v10.16b
	mov	v23.16b, v11.16b
	cbz	x0, .Lsums
	b	.Lstart
	// BIAS, accumulate = 1: the bias added to C in block order
.Lbias_c:
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld4r	{v0.2d, v1.2d, v2.2d, v3.2d}, [x9]
	add	v8.4s, v8.4s, v0.4s
	add	v9.4s, v9.4s, v1.4s
	add	v10.4s, v10.4s, v2.4s
	add	v11.4s, v11.4s, v3.4s
	add	v12.4s, v12.4s, v0.4s
	add	v13.4s, v13.4s, v1.4s
	add	v14.4s, v14.4s, v2.4s
	add	v15.4s, v15.4s, v3.4s
	add	v16.4s, v16.4s, v0.4s
	add	v17.4s, v17.4s, v1.4s
	add	v18.4s, v18.4s, v2.4s
	add	v19.4s, v19.4s, v3.4s
	add	v20.4s, v20.4s, v0.4s
	add	v21.4s, v21.4s, v1.4s
	add	v22.4s, v22.4s, v2.4s
	add	v23.4s, v23.4s, v3.4s
	cbnz	x0, .Lstart
	b	.Lsums
	// PARTIAL (accumulate = 0): the accumulators start from the partial rows, partial_ld int32 apart, then BIAS
.Lpartial:
	ldr	x9, [x6, #ISF_EP_PARTIAL]
	ldr	w11, [x6, #ISF_EP_PARTIAL_LD]
	lsl	x11, x11, #2
	load_blocks	x9, x11, 8, 9, 10, 11
	load_blocks	x9, x11, 12, 13, 14, 15
	load_blocks	x9, x11, 16, 17, 18, 19
	load_blocks	x9, x11, 20, 21, 22, 23
	tbnz	w10, #STEP_BIAS, .Lbias_c
	cbnz	x0, .Lstart
	b	.Lsums
	// TO_F32 or TO_S8: the blocks to rows, ROW_OFFSET in int32, then to fp32 and the scales
.Lquantized:
	unzip	16, 17, 18, 19, 24, 25, 26, 27
	unzip	20, 21, 22, 23, 28, 29, 30, 31
	unzip	8, 9, 10, 11, 16, 17, 18, 19
	unzip	12, 13, 14, 15, 20, 21, 22, 23
	tbz	w10, #STEP_ROW_OFFSET, .Lconvert
	ldr	x9, [x6, #ISF_EP_COL_SUM]
	ld1	{v0.4s, v1.4s}, [x9]
	ldr	x9, [x6, #ISF_EP_ROW_OFFSET]
	ld1	{v2.4s, v3.4s}, [x9]
	row_mla	16, 17, v2, 0
	row_mla	18, 19, v2, 1
	row_mla	20, 21, v2, 2
	row_mla	22, 23, v2, 3
	row_mla	24, 25, v3, 0
	row_mla	26, 27, v3, 1
	row_mla	28, 29, v3, 2
	row_mla	30, 31, v3, 3
.Lconvert:
	each	scvtf
	// ROW_SCALE belongs to TO_F32 (TO_F32 wins if both outputs are set, as in the scalar definition)
	tbz	w10, #STEP_TO_F32, .Lcol_scale
	tbz	w10, #STEP_ROW_SCALE, .Lcol_scale
	ldr	x9, [x6, #ISF_EP_ROW_SCALE]
	ld1	{v2.4s, v3.4s}, [x9]
	row_fmul	16, 17, v2, 0
	row_fmul	18, 19, v2, 1
	row_fmul	20, 21, v2, 2
	row_fmul	22, 23, v2, 3
	row_fmul	24, 25, v3, 0
	row_fmul	26, 27, v3, 1
	row_fmul	28, 29, v3, 2
	row_fmul	30, 31, v3, 3
.Lcol_scale:
	ldr	x9, [x6, #ISF_EP_COL_SCALE]
	ld1	{v0.4s, v1.4s}, [x9]
	by_column	fmul
	tbz	w10, #STEP_TO_F32, .Lto_s8
	tbz	w10, #STEP_OUT_BIAS, .Lclamp
	ldr	x9, [x6, #ISF_EP_OUT_BIAS]
	ld1	{v0.4s, v1.4s}, [x9]
	by_column	fadd
.Lclamp:
	tbz	w10, #STEP_CLAMP, .Lstore_f32
	add	x9, x6, #ISF_EP_MIN
	ld2r	{v5.4s, v6.4s}, [x9]
	each	fmax, v5
	each	fmin, v6
.Lstore_f32:
	st1	{v16.4s, v17.4s}, [x3], x4
	st1	{v18.4s, v19.4s}, [x3], x4
	st1	{v20.4s, v21.4s}, [x3], x4
	st1	{v22.4s, v23.4s}, [x3], x4
	st1	{v24.4s, v25.4s}, [x3], x4
	st1	{v26.4s, v27.4s}, [x3], x4
	st1	{v28.4s, v29.4s}, [x3], x4
	st1	{v30.4s, v31.4s}, [x3], x4
	b	.Lreturn
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
	rows_s8	16, 17, 18, 19
	rows_s8	20, 21, 22, 23
	rows_s8	24, 25, 26, 27
	rows_s8	28, 29, 30, 31
	b	.Lreturn
	.size	isf_ukernel_gemm_s8_8x8x8_i8mm, .-isf_ukernel_gemm_s8_8x8x8_i8mm

	.section	.note.GNU-stack,"",%progbits
