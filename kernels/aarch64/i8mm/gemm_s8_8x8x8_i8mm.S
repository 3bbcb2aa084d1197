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
 * The quantized outputs (TO_F32, TO_S8) leave the int32 store for .Lquantized. TO_S8 without ROW_OFFSET (gemm_qs8)
 * stays on the blocks: the column scales in block order (one ld4r, as the bias), scvtf, fmul, fcvtns on the 16
 * blocks, then each row pair's blocks narrowed to int16 with the zero point and to int8 (isf_epilogue_a64.h's
 * to_s16: sqxtn, sqadd, sqxtn), 2-byte units alternating between the pair's rows, which uzp1/uzp2 of two pairs
 * separate into four rows: no unzip of the int32 blocks. Otherwise .Lrows first un-interleaves the blocks into
 * rows (uzp1/uzp2, as the store does): row i in v(16 + 2i), v(17 + 2i), rows 4-7 first so that no block is
 * overwritten before it is read. The steps are then kernels/aarch64/isf_epilogue_a64.h's `quantize`, shared with
 * the dotprod kernels, on the row-order tile of kernels/aarch64/isf_rows_8x8_a64.h (gemm_s8_8x8x4_dotprod's too).
 */

#include "kernels/aarch64/isf_rows_8x8_a64.h" /* from the source root: also from the .inst-encoded copy */

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

/* The 8 rows from memory \stride bytes apart into the 16 blocks. */
	.macro	load_tile src, stride
	load_blocks	\src, \stride, 8, 9, 10, 11
	load_blocks	\src, \stride, 12, 13, 14, 15
	load_blocks	\src, \stride, 16, 17, 18, 19
	load_blocks	\src, \stride, 20, 21, 22, 23
	.endm

/* The blocks \b0-\b3 of rows 2p, 2p+1 to the rows: \r0, \r1 row 2p (columns 0-3, 4-7), \r2, \r3 row 2p+1. */
	.macro	unzip b0, b1, b2, b3, r0, r1, r2, r3
	uzp1	v\r0\().2d, v\b0\().2d, v\b1\().2d
	uzp1	v\r1\().2d, v\b2\().2d, v\b3\().2d
	uzp2	v\r2\().2d, v\b0\().2d, v\b1\().2d
	uzp2	v\r3\().2d, v\b2\().2d, v\b3\().2d
	.endm

/* The blocks \b0-\b3 of one row pair to C: unzipped into v0-v3, two rows stored. */
	.macro	store_pair b0, b1, b2, b3
	unzip	\b0, \b1, \b2, \b3, 0, 1, 2, 3
	st1	{v0.4s, v1.4s}, [x3], x4
	st1	{v2.4s, v3.4s}, [x3], x4
	.endm

/* The int32 tile to C, row stride ldc. */
	.macro	store_s32
	store_pair	8, 9, 10, 11
	store_pair	12, 13, 14, 15
	store_pair	16, 17, 18, 19
	store_pair	20, 21, 22, 23
	.endm

/* TO_S8 without ROW_OFFSET, on the blocks: the blocks \b0-\b3 of one row pair (fcvtns's int32) to the 16 bytes
 * of v\d, in 16-bit units row 2p's columns 2j, 2j+1 then row 2p+1's, j = 0..3 (to_s16: v1, v2 scratch). */
	.macro	pair_s8 d, b0, b1, b2, b3
	to_s16	1, \b0, \b1
	to_s16	2, \b2, \b3
	sqxtn	v\d\().8b, v1.8h
	sqxtn2	v\d\().16b, v2.8h
	.endm

/* Two row pairs' bytes (pair_s8's \p, \q) to four rows of C: the even 16-bit units of both are rows 2p and 2q,
 * the odd ones rows 2p+1 and 2q+1 (uzp1/uzp2), clamped, stored at x3 a row apart in row order. */
	.macro	rows4_s8 clamp, p, q
	uzp1	v5.8h, v\p\().8h, v\q\().8h
	uzp2	v6.8h, v\p\().8h, v\q\().8h
	clamp_s8	\clamp, 16b, v5, v6
	st1	{v5.d}[0], [x3], x4
	st1	{v6.d}[0], [x3], x4
	st1	{v5.d}[1], [x3], x4
	st1	{v6.d}[1], [x3], x4
	.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_8x8x8_i8mm
	.type	isf_ukernel_gemm_s8_8x8x8_i8mm, %function
isf_ukernel_gemm_s8_8x8x8_i8mm:
	tile_prologue
	cbz	w5, .Lzero
	// accumulate = 1: the accumulators start from C
	mov	x9, x3
	start_from	x9, x4, .Lstore
	// accumulate = 0: the accumulators start at zero
.Lzero:
	tbnz	w10, #ISF_EP_BIT_PARTIAL, .Lpartial
	tbnz	w10, #ISF_EP_BIT_BIAS, .Lbias
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
	tile_store
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
	partial
	// TO_S8 without ROW_OFFSET (TO_F32 not set): on the blocks, no unzip
.Lquantized:
	tst	w10, #((1 << ISF_EP_BIT_TO_F32) | (1 << ISF_EP_BIT_ROW_OFFSET))
	b.ne	.Lrows
	// the column scales in block order: v<j> = columns 2j, 2j+1 in both halves
	ldr	x9, [x6, #ISF_EP_COL_SCALE]
	ld4r	{v0.2d, v1.2d, v2.2d, v3.2d}, [x9]
	over	scvtf, , 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23
	over	fmul, v0, 8, 12, 16, 20
	over	fmul, v1, 9, 13, 17, 21
	over	fmul, v2, 10, 14, 18, 22
	over	fmul, v3, 11, 15, 19, 23
	over	fcvtns, , 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23
	lsr	x4, x4, #2
	ldr	w9, [x6, #ISF_EP_OUT_ZP]
	dup	v0.8h, w9
	pair_s8	24, 8, 9, 10, 11
	pair_s8	25, 12, 13, 14, 15
	pair_s8	26, 16, 17, 18, 19
	pair_s8	27, 20, 21, 22, 23
	open_s8	.Lblocks_open
	rows4_s8	1, 24, 25
	rows4_s8	1, 26, 27
	b	.Lreturn
.Lblocks_open:
	rows4_s8	0, 24, 25
	rows4_s8	0, 26, 27
	b	.Lreturn
	// TO_F32 or TO_S8: the blocks to rows, ROW_OFFSET in int32, then to fp32 and the scales
.Lrows:
	unzip	16, 17, 18, 19, 24, 25, 26, 27
	unzip	20, 21, 22, 23, 28, 29, 30, 31
	unzip	8, 9, 10, 11, 16, 17, 18, 19
	unzip	12, 13, 14, 15, 20, 21, 22, 23
	quantize	.Lstore_f32
	.size	isf_ukernel_gemm_s8_8x8x8_i8mm, .-isf_ukernel_gemm_s8_8x8x8_i8mm

	.section	.note.GNU-stack,"",%progbits