/* What the 8x12x4 dotprod kernels share (gemm_s8_8x12x4_dotprod.S, gemm_s4_8x12x4_dotprod.S), for assembly only:
 * the register layout (c(r, 4j..4j+3) in v(8 + 3r + j), v8-v31), the epilogue offsets and step bits, and the
 * code from the tile's finished int32 sums to the return (int32 store, or the quantized outputs in place). Each
 * kernel keeps its own k loop and the way its accumulators start, since that is where int8 and int4 B differ.
 *
 * Register contract of tile_prologue / tile_epilogue: x3 C, x4 ldc in bytes, x6 the epilogue, w10 its steps;
 * d8-d15 saved by tile_prologue and restored on every path out of tile_epilogue.
 */
#ifndef ISAFORGE_S8_8X12X4_H
#define ISAFORGE_S8_8X12X4_H
/* Assembly: not for clang-format. */
/* clang-format off */

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

/* Saves d8-d15 (AAPCS64: callee-saved low halves), makes x4 ldc in bytes and reads the steps into w10. */
	.macro	tile_prologue
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	lsl	x4, x4, #2
	ldr	w10, [x6, #ISF_EP_STEPS]
	.endm

/* The 24 accumulators hold the tile's int32 sums (C, PARTIAL and BIAS already in): the store and the return.
 * Defines .Lsums (enter here), .Lstore and .Lreturn; expand once per kernel. */
	.macro	tile_epilogue
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
	.endm

/* clang-format on */
#endif
