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
 * layout, same ldc in bytes), the int8 one a pair of rows at a time (12 bytes a row: a d and an s store). The
 * fp32 steps are separate fmul/fadd, never fmla: one rounding each, as the contract says. TO_S8 is fcvtns (to
 * nearest, ties to even, saturating), sqxtn to int16, sqadd out_zp in int16, sqxtn to int8, then smax/smin
 * qmin/qmax: exact (isf_epilogue_a64.h's `quantize` says why).
 */

#include "kernels/aarch64/dotprod/isf_s8_8x12x4.h" /* from the source root: also from the .inst-encoded copy */

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_8x12x4_dotprod
	.type	isf_ukernel_gemm_s8_8x12x4_dotprod, %function
isf_ukernel_gemm_s8_8x12x4_dotprod:
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
	tile_epilogue
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
	partial
	.size	isf_ukernel_gemm_s8_8x12x4_dotprod, .-isf_ukernel_gemm_s8_8x12x4_dotprod

	.section	.note.GNU-stack,"",%progbits
