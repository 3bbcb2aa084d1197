/* What the 8x8x4 dotprod kernels share (gemm_s8_8x8x4_dotprod.S, gemm_s4_8x8x4_dotprod.S), for assembly only: the
 * tile in row order, c(r, 4j..4j+3) in v(16 + 2r + j), v16-v31, as kernels/aarch64/isf_rows_8x8_a64.h describes
 * it to the epilogue steps, its loads and int32 store, and the code from the tile's finished int32 sums to the
 * return. Each kernel keeps its own k loop and the way its accumulators start, since that is where int8 and int4 B
 * differ.
 */
#ifndef ISAFORGE_S8_8X8X4_H
#define ISAFORGE_S8_8X8X4_H
/* Assembly: not for clang-format. */
/* clang-format off */

#include "kernels/aarch64/isf_rows_8x8_a64.h" /* from the source root: also from the .inst-encoded copy */

/* The 8 rows of the tile from memory \stride bytes apart (C on accumulate, the partial sums for PARTIAL). */
	.macro	load_tile src, stride
	ld1	{v16.4s, v17.4s}, [\src], \stride
	ld1	{v18.4s, v19.4s}, [\src], \stride
	ld1	{v20.4s, v21.4s}, [\src], \stride
	ld1	{v22.4s, v23.4s}, [\src], \stride
	ld1	{v24.4s, v25.4s}, [\src], \stride
	ld1	{v26.4s, v27.4s}, [\src], \stride
	ld1	{v28.4s, v29.4s}, [\src], \stride
	ld1	{v30.4s, v31.4s}, [\src], \stride
	.endm

/* The int32 tile to C: the sums are in row order. */
	.macro	store_s32
	store_rows
	.endm

/* The 16 accumulators hold the tile's int32 sums (C, PARTIAL and BIAS already in): the store and the return.
 * Defines .Lsums (enter here), .Lstore and .Lreturn; expand once per kernel (\x16: 1 in the int4 kernels, for
 * `quantize`'s .Lconvert_x16). */
	.macro	tile_epilogue x16=0
	tile_store
.Lquantized:
	quantize	.Lstore_f32, \x16
	.endm

/* clang-format on */
#endif
