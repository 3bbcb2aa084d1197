/* What the 8x12x4 dotprod kernels share (gemm_s8_8x12x4_dotprod.S, gemm_s4_8x12x4_dotprod.S), for assembly only:
 * the register layout (c(r, 4j..4j+3) in v(8 + 3r + j), v8-v31) as the tile macros of
 * kernels/aarch64/isf_epilogue_a64.h (the epilogue offsets, step bits and the quantized steps every AArch64 int8
 * kernel shares), and the code from the tile's finished int32 sums to the return (int32 store, or the quantized
 * outputs in place). Each kernel keeps its own k loop and the way its accumulators start, since that is where
 * int8 and int4 B differ.
 *
 * Register contract of tile_prologue / tile_epilogue: x3 C, x4 ldc in bytes, x6 the epilogue, w10 its steps;
 * d8-d15 saved by tile_prologue and restored on every path out of tile_epilogue. The quantized steps take the
 * column vectors in v0-v2 and the row values in v3, v4 (lane i & 3 of v3 for rows 0-3, of v4 for 4-7).
 */
#ifndef ISAFORGE_S8_8X12X4_H
#define ISAFORGE_S8_8X12X4_H
/* Assembly: not for clang-format. */
/* clang-format off */

#include "kernels/aarch64/isf_epilogue_a64.h" /* from the source root: also from the .inst-encoded copy */

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

/* The int32 (or fp32) tile to C, row stride ldc. */
	.macro	store_s32
	st1	{v8.4s, v9.4s, v10.4s}, [x3], x4
	st1	{v11.4s, v12.4s, v13.4s}, [x3], x4
	st1	{v14.4s, v15.4s, v16.4s}, [x3], x4
	st1	{v17.4s, v18.4s, v19.4s}, [x3], x4
	st1	{v20.4s, v21.4s, v22.4s}, [x3], x4
	st1	{v23.4s, v24.4s, v25.4s}, [x3], x4
	st1	{v26.4s, v27.4s, v28.4s}, [x3], x4
	st1	{v29.4s, v30.4s, v31.4s}, [x3], x4
	.endm

/* One step on all 24 accumulators: with \v, acc = acc op \v. */
	.macro	each op, v
	over	\op, \v, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	.endm

/* acc = acc op column vector, on all 24 accumulators (the columns' values in v0-v2). */
	.macro	by_column op
	over	\op, v0, 8, 11, 14, 17, 20, 23, 26, 29
	over	\op, v1, 9, 12, 15, 18, 21, 24, 27, 30
	over	\op, v2, 10, 13, 16, 19, 22, 25, 28, 31
	.endm

/* The 12 column values at the epilogue's \field into v0-v2. */
	.macro	columns field
	load_field	\field, v0.4s, v1.4s, v2.4s
	.endm

/* The 8 row values at the epilogue's \field into v3, v4. */
	.macro	rows field
	load_field	\field, v3.4s, v4.4s
	.endm

/* The row vectors shifted left \n (x16_start's 16 × ROW_OFFSET). */
	.macro	shift_rows n
	shl	v3.4s, v3.4s, #\n
	shl	v4.4s, v4.4s, #\n
	.endm

/* `row \op` on each row (\a, \b, \c) with its lane of v3, v4. */
	.macro	by_row op
	row	\op, v3, 0, 8, 9, 10
	row	\op, v3, 1, 11, 12, 13
	row	\op, v3, 2, 14, 15, 16
	row	\op, v3, 3, 17, 18, 19
	row	\op, v4, 0, 20, 21, 22
	row	\op, v4, 1, 23, 24, 25
	row	\op, v4, 2, 26, 27, 28
	row	\op, v4, 3, 29, 30, 31
	.endm

/* The fp32 tile leaves through the int32 store (same layout, same ldc in bytes). */
	.macro	store_f32
	b	.Lstore
	.endm

/* Two TO_S8 rows (\a, \b, \c and \d, \e, \f): columns 0-7 of both through v1, v2 into v1 (narrow_s8), columns
 * 8-11 of both through v5 into its low 8 bytes; 8 bytes of each row stored at x3, 4 at x9 = x3 + 8, both a row
 * on per row. */
	.macro	rows_s8 clamp, a, b, c, d, e, f
	narrow_s8	\clamp, \a, \b, \d, \e
	to_s16	5, \c, \f
	sqxtn	v5.8b, v5.8h
	clamp_s8	\clamp, 8b, v5
	st1	{v1.d}[0], [x3], x4
	st1	{v5.s}[0], [x9], x4
	st1	{v1.d}[1], [x3], x4
	st1	{v5.s}[1], [x9], x4
	.endm

	.macro	store_s8 clamp
	add	x9, x3, #8
	rows_s8	\clamp, 8, 9, 10, 11, 12, 13
	rows_s8	\clamp, 14, 15, 16, 17, 18, 19
	rows_s8	\clamp, 20, 21, 22, 23, 24, 25
	rows_s8	\clamp, 26, 27, 28, 29, 30, 31
	.endm

/* The 24 accumulators hold the tile's int32 sums (C, PARTIAL and BIAS already in): the store and the return.
 * Defines .Lsums (enter here), .Lstore and .Lreturn; expand once per kernel (\x16: 1 in the int4 kernels, for
 * `quantize`'s .Lconvert_x16). */
	.macro	tile_epilogue x16=0
	tile_store
	// TO_F32 or TO_S8: ROW_OFFSET in int32, then to fp32 and the scales
.Lquantized:
	quantize	.Lstore, \x16
	.endm

/* clang-format on */
#endif
