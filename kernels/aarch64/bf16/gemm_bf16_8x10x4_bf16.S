/* gemm_bf16_8x10x4_bf16
 *
 * bfloat16 -> fp32 GEMM micro-kernel (FEAT_BF16): 8x10 tile, bfmmla, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements,
 * w5 accumulate, x6 epilogue: unused, no step is asked of it yet).
 *
 * Per block A is 64 bytes (a<i>: rows 2i, 2i+1 x 4 k) and B 80 bytes (b<j>: columns 2j, 2j+1 x 4 k): exactly
 * bfmmla's operands. v(12 + 5i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out
 * [r0c0 r0c1 r1c0 r1c1] (20 blocks: bfmmla's 5-6 cycle latency at 4 per cycle on Neoverse V1/V2); uzp1/uzp2 on
 * 64-bit lanes rebuild rows at the store. Accumulators start at zero and accumulate = 1 adds C at the store, as
 * the C version does (same results bit for bit). bfmmla without FEAT_EBF16 flushes subnormals and rounds its
 * intermediate sums to odd: not bit-identical to fp32 fmla arithmetic.
 *
 * Software pipelining with the 3 registers left (20 accumulators + 9 operands): a0-a2 are double-buffered
 * (v0-v2 / v9-v11; the loop is unrolled twice: E computes with v0-v2 and loads the next block's into v9-v11, O
 * the other way round); a3 (v3) and b0-b4 (v4-v8) are reloaded once dead. Order per block: rows 0-5 x b0, b1,
 * then a3's row x b0-b4, then the loads of a3, b0, b1 and the next a0-a2 together, rows 0-5 x b2-b4, then the
 * loads of b2-b4 together: every load is at least 8 bfmmla ahead of its first use, and the loads sit in two
 * groups (what in-order cores prefer). The last block is peeled (no loads), so nothing past the panels is read.
 * k_blocks odd enters at E with a0-a2 in v0-v2, even at O with them in v9-v11; the loop runs k_blocks / 2 times.
 */

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_bf16_8x10x4_bf16
	.type	isf_ukernel_gemm_bf16_8x10x4_bf16, %function
isf_ukernel_gemm_bf16_8x10x4_bf16:
	// save d8-d15 (AAPCS64: callee-saved low halves); x4 = ldc in bytes
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	// accumulators start at zero; C is added at the store when accumulate = 1
	lsl	x4, x4, #2
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
	cbz	x0, .Lstore
	mov	x12, #64
	tbz	x0, #0, .Leven
	ld1	{v0.8h, v1.8h, v2.8h, v3.8h}, [x1], #64
	ld1	{v4.8h, v5.8h, v6.8h, v7.8h}, [x2], #64
	ldr	q8, [x2], #16
	lsr	x0, x0, #1
	cbz	x0, .Lfinal
	// isf-hot-loop-begin
	// E: compute the block in the first register set, load the next block
.Lloop:
	bfmmla	v12.4s, v0.8h, v4.8h
	bfmmla	v17.4s, v1.8h, v4.8h
	bfmmla	v22.4s, v2.8h, v4.8h
	bfmmla	v13.4s, v0.8h, v5.8h
	bfmmla	v18.4s, v1.8h, v5.8h
	bfmmla	v23.4s, v2.8h, v5.8h
	bfmmla	v27.4s, v3.8h, v4.8h
	bfmmla	v28.4s, v3.8h, v5.8h
	bfmmla	v29.4s, v3.8h, v6.8h
	bfmmla	v30.4s, v3.8h, v7.8h
	bfmmla	v31.4s, v3.8h, v8.8h
	ldr	q3, [x1, #48]
	ldp	q4, q5, [x2], #80
	ld1	{v9.8h, v10.8h, v11.8h}, [x1], x12
	bfmmla	v14.4s, v0.8h, v6.8h
	bfmmla	v19.4s, v1.8h, v6.8h
	bfmmla	v24.4s, v2.8h, v6.8h
	bfmmla	v15.4s, v0.8h, v7.8h
	bfmmla	v20.4s, v1.8h, v7.8h
	bfmmla	v25.4s, v2.8h, v7.8h
	bfmmla	v16.4s, v0.8h, v8.8h
	bfmmla	v21.4s, v1.8h, v8.8h
	bfmmla	v26.4s, v2.8h, v8.8h
	ldur	q6, [x2, #-48]
	ldp	q7, q8, [x2, #-32]
	// O: the same with the second register set
.Lmid:
	bfmmla	v12.4s, v9.8h, v4.8h
	bfmmla	v17.4s, v10.8h, v4.8h
	bfmmla	v22.4s, v11.8h, v4.8h
	bfmmla	v13.4s, v9.8h, v5.8h
	bfmmla	v18.4s, v10.8h, v5.8h
	bfmmla	v23.4s, v11.8h, v5.8h
	bfmmla	v27.4s, v3.8h, v4.8h
	bfmmla	v28.4s, v3.8h, v5.8h
	bfmmla	v29.4s, v3.8h, v6.8h
	bfmmla	v30.4s, v3.8h, v7.8h
	bfmmla	v31.4s, v3.8h, v8.8h
	ldr	q3, [x1, #48]
	ldp	q4, q5, [x2], #80
	ld1	{v0.8h, v1.8h, v2.8h}, [x1], x12
	bfmmla	v14.4s, v9.8h, v6.8h
	bfmmla	v19.4s, v10.8h, v6.8h
	bfmmla	v24.4s, v11.8h, v6.8h
	bfmmla	v15.4s, v9.8h, v7.8h
	bfmmla	v20.4s, v10.8h, v7.8h
	bfmmla	v25.4s, v11.8h, v7.8h
	bfmmla	v16.4s, v9.8h, v8.8h
	bfmmla	v21.4s, v10.8h, v8.8h
	bfmmla	v26.4s, v11.8h, v8.8h
	ldur	q6, [x2, #-48]
	ldp	q7, q8, [x2, #-32]
	subs	x0, x0, #1
	b.ne	.Lloop
	// isf-hot-loop-end
	// last block: compute only, nothing past the panels is read
.Lfinal:
	bfmmla	v12.4s, v0.8h, v4.8h
	bfmmla	v17.4s, v1.8h, v4.8h
	bfmmla	v22.4s, v2.8h, v4.8h
	bfmmla	v13.4s, v0.8h, v5.8h
	bfmmla	v18.4s, v1.8h, v5.8h
	bfmmla	v23.4s, v2.8h, v5.8h
	bfmmla	v27.4s, v3.8h, v4.8h
	bfmmla	v28.4s, v3.8h, v5.8h
	bfmmla	v29.4s, v3.8h, v6.8h
	bfmmla	v30.4s, v3.8h, v7.8h
	bfmmla	v31.4s, v3.8h, v8.8h
	bfmmla	v14.4s, v0.8h, v6.8h
	bfmmla	v19.4s, v1.8h, v6.8h
	bfmmla	v24.4s, v2.8h, v6.8h
	bfmmla	v15.4s, v0.8h, v7.8h
	bfmmla	v20.4s, v1.8h, v7.8h
	bfmmla	v25.4s, v2.8h, v7.8h
	bfmmla	v16.4s, v0.8h, v8.8h
	bfmmla	v21.4s, v1.8h, v8.8h
	bfmmla	v26.4s, v2.8h, v8.8h
	// write the MRxNR tile, row stride ldc
.Lstore:
	cbnz	w5, .Laccumulate
	uzp1	v0.2d, v12.2d, v13.2d
	uzp1	v1.2d, v14.2d, v15.2d
	uzp2	v2.2d, v12.2d, v13.2d
	uzp2	v3.2d, v14.2d, v15.2d
	add	x10, x3, x4
	st1	{v0.4s, v1.4s}, [x3]
	str	d16, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10], #32
	st1	{v16.d}[1], [x10]
	add	x3, x3, x4, lsl #1
	uzp1	v0.2d, v17.2d, v18.2d
	uzp1	v1.2d, v19.2d, v20.2d
	uzp2	v2.2d, v17.2d, v18.2d
	uzp2	v3.2d, v19.2d, v20.2d
	add	x10, x3, x4
	st1	{v0.4s, v1.4s}, [x3]
	str	d21, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10], #32
	st1	{v21.d}[1], [x10]
	add	x3, x3, x4, lsl #1
	uzp1	v0.2d, v22.2d, v23.2d
	uzp1	v1.2d, v24.2d, v25.2d
	uzp2	v2.2d, v22.2d, v23.2d
	uzp2	v3.2d, v24.2d, v25.2d
	add	x10, x3, x4
	st1	{v0.4s, v1.4s}, [x3]
	str	d26, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10], #32
	st1	{v26.d}[1], [x10]
	add	x3, x3, x4, lsl #1
	uzp1	v0.2d, v27.2d, v28.2d
	uzp1	v1.2d, v29.2d, v30.2d
	uzp2	v2.2d, v27.2d, v28.2d
	uzp2	v3.2d, v29.2d, v30.2d
	add	x10, x3, x4
	st1	{v0.4s, v1.4s}, [x3]
	str	d31, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10], #32
	st1	{v31.d}[1], [x10]
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	// accumulate = 1: C + A*B, in the order the C version adds
.Laccumulate:
	add	x10, x3, x4
	add	x11, x10, #32
	ld1	{v4.4s, v5.4s}, [x3]
	ldr	d8, [x3, #32]
	ld1	{v6.4s, v7.4s}, [x10]
	ld1	{v8.d}[1], [x11]
	uzp1	v0.2d, v12.2d, v13.2d
	uzp1	v1.2d, v14.2d, v15.2d
	uzp2	v2.2d, v12.2d, v13.2d
	uzp2	v3.2d, v14.2d, v15.2d
	fadd	v0.4s, v0.4s, v4.4s
	fadd	v1.4s, v1.4s, v5.4s
	fadd	v2.4s, v2.4s, v6.4s
	fadd	v3.4s, v3.4s, v7.4s
	fadd	v16.4s, v16.4s, v8.4s
	st1	{v0.4s, v1.4s}, [x3]
	str	d16, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10]
	st1	{v16.d}[1], [x11]
	add	x3, x3, x4, lsl #1
	add	x10, x3, x4
	add	x11, x10, #32
	ld1	{v4.4s, v5.4s}, [x3]
	ldr	d8, [x3, #32]
	ld1	{v6.4s, v7.4s}, [x10]
	ld1	{v8.d}[1], [x11]
	uzp1	v0.2d, v17.2d, v18.2d
	uzp1	v1.2d, v19.2d, v20.2d
	uzp2	v2.2d, v17.2d, v18.2d
	uzp2	v3.2d, v19.2d, v20.2d
	fadd	v0.4s, v0.4s, v4.4s
	fadd	v1.4s, v1.4s, v5.4s
	fadd	v2.4s, v2.4s, v6.4s
	fadd	v3.4s, v3.4s, v7.4s
	fadd	v21.4s, v21.4s, v8.4s
	st1	{v0.4s, v1.4s}, [x3]
	str	d21, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10]
	st1	{v21.d}[1], [x11]
	add	x3, x3, x4, lsl #1
	add	x10, x3, x4
	add	x11, x10, #32
	ld1	{v4.4s, v5.4s}, [x3]
	ldr	d8, [x3, #32]
	ld1	{v6.4s, v7.4s}, [x10]
	ld1	{v8.d}[1], [x11]
	uzp1	v0.2d, v22.2d, v23.2d
	uzp1	v1.2d, v24.2d, v25.2d
	uzp2	v2.2d, v22.2d, v23.2d
	uzp2	v3.2d, v24.2d, v25.2d
	fadd	v0.4s, v0.4s, v4.4s
	fadd	v1.4s, v1.4s, v5.4s
	fadd	v2.4s, v2.4s, v6.4s
	fadd	v3.4s, v3.4s, v7.4s
	fadd	v26.4s, v26.4s, v8.4s
	st1	{v0.4s, v1.4s}, [x3]
	str	d26, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10]
	st1	{v26.d}[1], [x11]
	add	x3, x3, x4, lsl #1
	add	x10, x3, x4
	add	x11, x10, #32
	ld1	{v4.4s, v5.4s}, [x3]
	ldr	d8, [x3, #32]
	ld1	{v6.4s, v7.4s}, [x10]
	ld1	{v8.d}[1], [x11]
	uzp1	v0.2d, v27.2d, v28.2d
	uzp1	v1.2d, v29.2d, v30.2d
	uzp2	v2.2d, v27.2d, v28.2d
	uzp2	v3.2d, v29.2d, v30.2d
	fadd	v0.4s, v0.4s, v4.4s
	fadd	v1.4s, v1.4s, v5.4s
	fadd	v2.4s, v2.4s, v6.4s
	fadd	v3.4s, v3.4s, v7.4s
	fadd	v31.4s, v31.4s, v8.4s
	st1	{v0.4s, v1.4s}, [x3]
	str	d31, [x3, #32]
	st1	{v2.4s, v3.4s}, [x10]
	st1	{v31.d}[1], [x11]
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	// k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	ld1	{v9.8h, v10.8h, v11.8h}, [x1], #48
	ldr	q3, [x1], #16
	ld1	{v4.8h, v5.8h, v6.8h, v7.8h}, [x2], #64
	ldr	q8, [x2], #16
	lsr	x0, x0, #1
	b	.Lmid
	.size	isf_ukernel_gemm_bf16_8x10x4_bf16, .-isf_ukernel_gemm_bf16_8x10x4_bf16

	.section	.note.GNU-stack,"",%progbits
