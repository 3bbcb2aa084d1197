/* gemm_s8_8x8x8_i8mm
 *
 * int8 -> int32 GEMM micro-kernel: 8x8 tile, smmla, 8 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements,
 * w5 accumulate, x6 epilogue: BIAS only, the driver never asks an int32 kernel to clamp).
 *
 * Per block A is 64 bytes (a<i>: rows 2i, 2i+1 x 8 k) and B 64 bytes (b<j>: columns 2j, 2j+1 x 8 k): exactly
 * smmla's operands. v(8 + 4i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out
 * [r0c0 r0c1 r1c0 r1c1]; zip1/zip2 (load, accumulate = 1: exact in int32) and uzp1/uzp2 (store) on 64-bit lanes
 * convert between row pairs and blocks. The BIAS step starts the accumulators from the bias (added to C with
 * accumulate = 1): int32 addition wraps modulo 2^32, so adding it first gives the bits the contract's
 * sums + C + bias does, and on the accumulate = 0 path it costs a load instead of 16 additions at the store. In
 * block order the bias of columns 2j, 2j+1 is the 64-bit pair bias[2j..2j+1] in both halves: one ld4r.
 *
 * Software pipelining: 16 accumulators leave room to double-buffer both panels (set 0: A v0-v3, B v4-v7; set 1:
 * A v24-v27, B v28-v31), one 4-register ld1 per panel and block. The loop is unrolled twice (E computes set 0
 * and loads set 1, O the other way round); the last block is peeled (no loads), so nothing past the panels is
 * read. k_blocks odd enters at E with set 0 loaded, even at O with set 1; the loop runs k_blocks / 2 times.
 */

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
	ldr	w10, [x6]
	cbz	w5, .Lzero
	// accumulate = 1: the accumulators start from C
	mov	x9, x3
	ld1	{v0.4s, v1.4s}, [x9], x4
	ld1	{v2.4s, v3.4s}, [x9], x4
	zip1	v8.2d, v0.2d, v2.2d
	zip2	v9.2d, v0.2d, v2.2d
	zip1	v10.2d, v1.2d, v3.2d
	zip2	v11.2d, v1.2d, v3.2d
	ld1	{v0.4s, v1.4s}, [x9], x4
	ld1	{v2.4s, v3.4s}, [x9], x4
	zip1	v12.2d, v0.2d, v2.2d
	zip2	v13.2d, v0.2d, v2.2d
	zip1	v14.2d, v1.2d, v3.2d
	zip2	v15.2d, v1.2d, v3.2d
	ld1	{v0.4s, v1.4s}, [x9], x4
	ld1	{v2.4s, v3.4s}, [x9], x4
	zip1	v16.2d, v0.2d, v2.2d
	zip2	v17.2d, v0.2d, v2.2d
	zip1	v18.2d, v1.2d, v3.2d
	zip2	v19.2d, v1.2d, v3.2d
	ld1	{v0.4s, v1.4s}, [x9], x4
	ld1	{v2.4s, v3.4s}, [x9], x4
	zip1	v20.2d, v0.2d, v2.2d
	zip2	v21.2d, v0.2d, v2.2d
	zip1	v22.2d, v1.2d, v3.2d
	zip2	v23.2d, v1.2d, v3.2d
	tbnz	w10, #0, .Lbias_c
	cbnz	x0, .Lstart
	b	.Lstore
	// accumulate = 0: the accumulators start at zero
.Lzero:
	tbnz	w10, #0, .Lbias
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
	cbz	x0, .Lstore
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
	ldr	x9, [x6, #16]
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
	cbz	x0, .Lstore
	b	.Lstart
	// BIAS, accumulate = 1: the bias added to C in block order
.Lbias_c:
	ldr	x9, [x6, #16]
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
	b	.Lstore
	.size	isf_ukernel_gemm_s8_8x8x8_i8mm, .-isf_ukernel_gemm_s8_8x8x8_i8mm

	.section	.note.GNU-stack,"",%progbits
