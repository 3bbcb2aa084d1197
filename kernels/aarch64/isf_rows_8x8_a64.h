/* The 8x8 int32 tile in row order, row i in v(16 + 2i) (columns 0-3) and v(17 + 2i) (columns 4-7), as
 * kernels/aarch64/isf_epilogue_a64.h's steps need it described, for assembly only: gemm_s8_8x8x8_i8mm.S (after its
 * unzip of the smmla blocks) and gemm_s8_8x8x4_dotprod.S (whose sdot sums are in row order from the start). Column
 * vectors go in v0, v1, row values in v2, v3 (lane i & 3 of v2 for rows 0-3, of v3 for 4-7), each loaded once per
 * tile; in TO_S8 two rows share a vector, one 8-byte store each. The int32 start and store stay in each kernel.
 */
#ifndef ISAFORGE_ROWS_8X8_A64_H
#define ISAFORGE_ROWS_8X8_A64_H
/* Assembly: not for clang-format. */
/* clang-format off */

#include "kernels/aarch64/isf_epilogue_a64.h" /* from the source root: also from the .inst-encoded copy */

/* One step on all 16 row vectors: with \v, acc = acc op \v. */
	.macro	each op, v
	over	\op, \v, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	.endm

/* acc = acc op column vector, on all 16 row vectors (the columns' values in v0, v1). */
	.macro	by_column op
	over	\op, v0, 16, 18, 20, 22, 24, 26, 28, 30
	over	\op, v1, 17, 19, 21, 23, 25, 27, 29, 31
	.endm

/* The 8 column values at the epilogue's \field into v0, v1. */
	.macro	columns field
	load_field	\field, v0.4s, v1.4s
	.endm

/* The 8 row values at the epilogue's \field into v2, v3. */
	.macro	rows field
	load_field	\field, v2.4s, v3.4s
	.endm

/* The row vectors shifted left \n (x16_start's 16 × ROW_OFFSET). */
	.macro	shift_rows n
	shl	v2.4s, v2.4s, #\n
	shl	v3.4s, v3.4s, #\n
	.endm

/* `row \op` on each row (\a, \b) with its lane of v2, v3. */
	.macro	by_row op
	row	\op, v2, 0, 16, 17
	row	\op, v2, 1, 18, 19
	row	\op, v2, 2, 20, 21
	row	\op, v2, 3, 22, 23
	row	\op, v3, 0, 24, 25
	row	\op, v3, 1, 26, 27
	row	\op, v3, 2, 28, 29
	row	\op, v3, 3, 30, 31
	.endm

/* The 8 rows to C, row stride ldc: the fp32 tile (store_f32, then .Lreturn), and the int32 one of a kernel whose
 * sums are in row order. */
	.macro	store_rows
	st1	{v16.4s, v17.4s}, [x3], x4
	st1	{v18.4s, v19.4s}, [x3], x4
	st1	{v20.4s, v21.4s}, [x3], x4
	st1	{v22.4s, v23.4s}, [x3], x4
	st1	{v24.4s, v25.4s}, [x3], x4
	st1	{v26.4s, v27.4s}, [x3], x4
	st1	{v28.4s, v29.4s}, [x3], x4
	st1	{v30.4s, v31.4s}, [x3], x4
	.endm

	.macro	store_f32
.Lstore_f32:
	store_rows
	b	.Lreturn
	.endm

/* Two TO_S8 rows (\a, \b), (\c, \d), stored at x3 a row apart. */
	.macro	rows_s8 clamp, a, b, c, d
	narrow_s8	\clamp, \a, \b, \c, \d
	st1	{v1.d}[0], [x3], x4
	st1	{v1.d}[1], [x3], x4
	.endm

	.macro	store_s8 clamp
	rows_s8	\clamp, 16, 17, 18, 19
	rows_s8	\clamp, 20, 21, 22, 23
	rows_s8	\clamp, 24, 25, 26, 27
	rows_s8	\clamp, 28, 29, 30, 31
	.endm

/* clang-format on */
#endif
