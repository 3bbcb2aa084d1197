/* gemm_s8_8x8x4_dotprod
 *
 * int8 -> int32 GEMM micro-kernel: 8x8 tile, sdot by element, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements,
 * w5 accumulate, x6 epilogue: BIAS, PARTIAL and the quantized outputs; CLAMP only with TO_F32). The column sibling
 * of gemm_s8_8x12x4_dotprod, for n that 12 columns pad markedly more than 8 do (n = 64: 72 against 64).
 *
 * Per block A is 32 bytes (rows 0-3, rows 4-7: one row's 4 k values per 32-bit lane) and B 32 bytes (columns 0-3,
 * 4-7: one column's 4 k values per lane). c(r, 4j..4j+3) lives in v(16 + 2r + j): v16-v31, the row order of
 * isf_s8_8x8x4.h (and kernels/aarch64/isf_rows_8x8_a64.h), so the int32 store, the starts from C or the partial
 * rows and every quantized step are a row's two registers at a time. accumulate = 1 starts them from C, BIAS from
 * the bias row (from C + bias with accumulate = 1; int32 addition wraps modulo 2^32, so adding it first gives the
 * contract's bits), PARTIAL from the partial rows, as gemm_s8_8x12x4_dotprod's.
 *
 * Software pipelining: both panels double-buffered (set 0: A v0, v1, B v2, v3; set 1: A v4, v5, B v6, v7), one
 * ldp per panel and block, 16 sdot per block; the loop is unrolled twice (E computes set 0 and loads set
 * 1, O the other way round) and the last block is peeled (no loads), so nothing past the panels is read. k_blocks
 * odd enters at E with set 0 loaded, even at O with set 1; the loop runs k_blocks / 2 times.
 */

#include "kernels/aarch64/dotprod/isf_s8_8x8x4.h" /* from the source root: also from the .inst-encoded copy */

/* One block's 16 sdot on register set 0 (A v0, v1; B v2, v3) or set 1 (A v4, v5; B v6, v7), column group j's B
 * vector against each row's lane into v(16 + 2r + j); with \next, the next block's A (ldp first) and B (ldp after
 * the first 8 sdot) into the other set, spread over the block as gemm_s8_8x12x4_dotprod spreads its loads, so an
 * in-order core (A55) issues them among the sdot. Literal registers: the .inst encoder of old assemblers reads no
 * macro arguments (\next is only tested). */
	.macro	block_set0 next
	.if	\next
	ldp	q4, q5, [x1], #32
	.endif
	sdot	v16.4s, v2.16b, v0.4b[0]
	sdot	v18.4s, v2.16b, v0.4b[1]
	sdot	v20.4s, v2.16b, v0.4b[2]
	sdot	v22.4s, v2.16b, v0.4b[3]
	sdot	v24.4s, v2.16b, v1.4b[0]
	sdot	v26.4s, v2.16b, v1.4b[1]
	sdot	v28.4s, v2.16b, v1.4b[2]
	sdot	v30.4s, v2.16b, v1.4b[3]
	.if	\next
	ldp	q6, q7, [x2], #32
	.endif
	sdot	v17.4s, v3.16b, v0.4b[0]
	sdot	v19.4s, v3.16b, v0.4b[1]
	sdot	v21.4s, v3.16b, v0.4b[2]
	sdot	v23.4s, v3.16b, v0.4b[3]
	sdot	v25.4s, v3.16b, v1.4b[0]
	sdot	v27.4s, v3.16b, v1.4b[1]
	sdot	v29.4s, v3.16b, v1.4b[2]
	sdot	v31.4s, v3.16b, v1.4b[3]
	.endm

	.macro	block_set1 next
	.if	\next
	ldp	q0, q1, [x1], #32
	.endif
	sdot	v16.4s, v6.16b, v4.4b[0]
	sdot	v18.4s, v6.16b, v4.4b[1]
	sdot	v20.4s, v6.16b, v4.4b[2]
	sdot	v22.4s, v6.16b, v4.4b[3]
	sdot	v24.4s, v6.16b, v5.4b[0]
	sdot	v26.4s, v6.16b, v5.4b[1]
	sdot	v28.4s, v6.16b, v5.4b[2]
	sdot	v30.4s, v6.16b, v5.4b[3]
	.if	\next
	ldp	q2, q3, [x2], #32
	.endif
	sdot	v17.4s, v7.16b, v4.4b[0]
	sdot	v19.4s, v7.16b, v4.4b[1]
	sdot	v21.4s, v7.16b, v4.4b[2]
	sdot	v23.4s, v7.16b, v4.4b[3]
	sdot	v25.4s, v7.16b, v5.4b[0]
	sdot	v27.4s, v7.16b, v5.4b[1]
	sdot	v29.4s, v7.16b, v5.4b[2]
	sdot	v31.4s, v7.16b, v5.4b[3]
	.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_8x8x4_dotprod
	.type	isf_ukernel_gemm_s8_8x8x4_dotprod, %function
isf_ukernel_gemm_s8_8x8x4_dotprod:
	tile_prologue
	cbz	w5, .Lzero
	// accumulate = 1: the accumulators start from C
	mov	x9, x3
	start_from	x9, x4, .Lstore
	// accumulate = 0: the accumulators start at zero
.Lzero:
	tbnz	w10, #ISF_EP_BIT_PARTIAL, .Lpartial
	tbnz	w10, #ISF_EP_BIT_BIAS, .Lbias
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
	tbz	x0, #0, .Leven
	ldp	q0, q1, [x1], #32
	ldp	q2, q3, [x2], #32
	lsr	x0, x0, #1
	cbz	x0, .Lfinal
	// E: compute the block in the first register set, load the next block
.Lloop:
	block_set0	1
	// O: the same with the second register set
.Lmid:
	block_set1	1
	subs	x0, x0, #1
	b.ne	.Lloop
	// last block: compute only, nothing past the panels is read
.Lfinal:
	block_set0	0
	// the tile's int32 sums are done: a quantized output converts them first
	tile_epilogue
	// k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	ldp	q4, q5, [x1], #32
	ldp	q6, q7, [x2], #32
	lsr	x0, x0, #1
	b	.Lmid
	// BIAS, accumulate = 0: every row starts from the bias row
.Lbias:
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld1	{v16.4s, v17.4s}, [x9]
	mov	v18.16b, v16.16b
	mov	v19.16b, v17.16b
	mov	v20.16b, v16.16b
	mov	v21.16b, v17.16b
	mov	v22.16b, v16.16b
	mov	v23.16b, v17.16b
	mov	v24.16b, v16.16b
	mov	v25.16b, v17.16b
	mov	v26.16b, v16.16b
	mov	v27.16b, v17.16b
	mov	v28.16b, v16.16b
	mov	v29.16b, v17.16b
	mov	v30.16b, v16.16b
	mov	v31.16b, v17.16b
	cbz	x0, .Lsums
	b	.Lstart
	// BIAS, accumulate = 1: the bias row added to every C row
.Lbias_c:
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld1	{v0.4s, v1.4s}, [x9]
	add	v16.4s, v16.4s, v0.4s
	add	v17.4s, v17.4s, v1.4s
	add	v18.4s, v18.4s, v0.4s
	add	v19.4s, v19.4s, v1.4s
	add	v20.4s, v20.4s, v0.4s
	add	v21.4s, v21.4s, v1.4s
	add	v22.4s, v22.4s, v0.4s
	add	v23.4s, v23.4s, v1.4s
	add	v24.4s, v24.4s, v0.4s
	add	v25.4s, v25.4s, v1.4s
	add	v26.4s, v26.4s, v0.4s
	add	v27.4s, v27.4s, v1.4s
	add	v28.4s, v28.4s, v0.4s
	add	v29.4s, v29.4s, v1.4s
	add	v30.4s, v30.4s, v0.4s
	add	v31.4s, v31.4s, v1.4s
	cbnz	x0, .Lstart
	b	.Lsums
	partial
	.size	isf_ukernel_gemm_s8_8x8x4_dotprod, .-isf_ukernel_gemm_s8_8x8x4_dotprod

	.section	.note.GNU-stack,"",%progbits
