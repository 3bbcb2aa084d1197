/* gemm_bf16_8x10x4_bf16
 *
 * bfloat16 -> fp32 GEMM micro-kernel (FEAT_BF16): 8x10 tile, bfmmla, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements,
 * w5 accumulate, x6 epilogue: BIAS and CLAMP).
 *
 * Per block A is 64 bytes (a<i>: rows 2i, 2i+1 x 4 k) and B 80 bytes (b<j>: columns 2j, 2j+1 x 4 k): exactly
 * bfmmla's operands. v(12 + 5i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out
 * [r0c0 r0c1 r1c0 r1c1] (20 blocks: bfmmla's 5-6 cycle latency at 4 per cycle on Neoverse V1/V2); uzp1/uzp2 on
 * 64-bit lanes rebuild rows at the store. Accumulators start at zero and accumulate = 1 adds C at the store, as
 * the C version does (same results bit for bit). bfmmla without FEAT_EBF16 flushes subnormals and rounds its
 * intermediate sums to odd: not bit-identical to fp32 fmla arithmetic.
 * The epilogue works on the accumulators in block order, before the store's uzp, so it needs no register beyond
 * v0-v11: C (accumulate = 1) is zipped into block order and added, sums first as .Laccumulate adds; in block
 * order the bias of columns 2j, 2j+1 is the 64-bit pair bias[2j..2j+1] in both halves (ld4r + ld1r), and the
 * clamp is elementwise. Then the plain store writes the tile. Without steps the cost is a load and a branch.
 *
 * Software pipelining with the 3 registers left (20 accumulators + 9 operands): a0-a2 are double-buffered
 * (v0-v2 / v9-v11; the loop is unrolled twice: E computes with v0-v2 and loads the next block's into v9-v11, O
 * the other way round); a3 (v3) and b0-b4 (v4-v8) are reloaded once dead. Order per block: rows 0-5 x b0, b1,
 * then a3's row x b0-b4, then the loads of a3, b0, b1 and the next a0-a2 together, rows 0-5 x b2-b4, then the
 * loads of b2-b4 together: every load is at least 8 bfmmla ahead of its first use, and the loads sit in two
 * groups (what in-order cores prefer). The last block is peeled (no loads), so nothing past the panels is read.
 * k_blocks odd enters at E with a0-a2 in v0-v2, even at O with them in v9-v11; the loop runs k_blocks / 2 times.
 */

#include "isf_epilogue_offsets.h"

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
	ldr	w9, [x6]
	cbnz	w9, .Lepilogue
	cbnz	w5, .Laccumulate
.Lstore_tile:
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
	// epilogue steps asked: C, bias and clamp applied in block order, then the plain store
.Lepilogue:
	cbz	w5, .Lep_bias
	mov	x10, x3
	add	x11, x10, x4
	ld1	{v0.4s, v1.4s}, [x10]
	ldr	d4, [x10, #32]
	ld1	{v2.4s, v3.4s}, [x11], #32
	ld1	{v4.d}[1], [x11]
	zip1	v5.2d, v0.2d, v2.2d
	zip2	v6.2d, v0.2d, v2.2d
	zip1	v7.2d, v1.2d, v3.2d
	zip2	v0.2d, v1.2d, v3.2d
	fadd	v12.4s, v12.4s, v5.4s
	fadd	v13.4s, v13.4s, v6.4s
	fadd	v14.4s, v14.4s, v7.4s
	fadd	v15.4s, v15.4s, v0.4s
	fadd	v16.4s, v16.4s, v4.4s
	add	x10, x10, x4, lsl #1
	add	x11, x10, x4
	ld1	{v0.4s, v1.4s}, [x10]
	ldr	d4, [x10, #32]
	ld1	{v2.4s, v3.4s}, [x11], #32
	ld1	{v4.d}[1], [x11]
	zip1	v5.2d, v0.2d, v2.2d
	zip2	v6.2d, v0.2d, v2.2d
	zip1	v7.2d, v1.2d, v3.2d
	zip2	v0.2d, v1.2d, v3.2d
	fadd	v17.4s, v17.4s, v5.4s
	fadd	v18.4s, v18.4s, v6.4s
	fadd	v19.4s, v19.4s, v7.4s
	fadd	v20.4s, v20.4s, v0.4s
	fadd	v21.4s, v21.4s, v4.4s
	add	x10, x10, x4, lsl #1
	add	x11, x10, x4
	ld1	{v0.4s, v1.4s}, [x10]
	ldr	d4, [x10, #32]
	ld1	{v2.4s, v3.4s}, [x11], #32
	ld1	{v4.d}[1], [x11]
	zip1	v5.2d, v0.2d, v2.2d
	zip2	v6.2d, v0.2d, v2.2d
	zip1	v7.2d, v1.2d, v3.2d
	zip2	v0.2d, v1.2d, v3.2d
	fadd	v22.4s, v22.4s, v5.4s
	fadd	v23.4s, v23.4s, v6.4s
	fadd	v24.4s, v24.4s, v7.4s
	fadd	v25.4s, v25.4s, v0.4s
	fadd	v26.4s, v26.4s, v4.4s
	add	x10, x10, x4, lsl #1
	add	x11, x10, x4
	ld1	{v0.4s, v1.4s}, [x10]
	ldr	d4, [x10, #32]
	ld1	{v2.4s, v3.4s}, [x11], #32
	ld1	{v4.d}[1], [x11]
	zip1	v5.2d, v0.2d, v2.2d
	zip2	v6.2d, v0.2d, v2.2d
	zip1	v7.2d, v1.2d, v3.2d
	zip2	v0.2d, v1.2d, v3.2d
	fadd	v27.4s, v27.4s, v5.4s
	fadd	v28.4s, v28.4s, v6.4s
	fadd	v29.4s, v29.4s, v7.4s
	fadd	v30.4s, v30.4s, v0.4s
	fadd	v31.4s, v31.4s, v4.4s
.Lep_bias:
	tbz	w9, #ISF_EP_BIT_BIAS, .Lep_clamp
	ldr	x10, [x6, #ISF_EP_BIAS]
	ld4r	{v0.2d, v1.2d, v2.2d, v3.2d}, [x10], #32
	ld1r	{v4.2d}, [x10]
	fadd	v12.4s, v12.4s, v0.4s
	fadd	v13.4s, v13.4s, v1.4s
	fadd	v14.4s, v14.4s, v2.4s
	fadd	v15.4s, v15.4s, v3.4s
	fadd	v16.4s, v16.4s, v4.4s
	fadd	v17.4s, v17.4s, v0.4s
	fadd	v18.4s, v18.4s, v1.4s
	fadd	v19.4s, v19.4s, v2.4s
	fadd	v20.4s, v20.4s, v3.4s
	fadd	v21.4s, v21.4s, v4.4s
	fadd	v22.4s, v22.4s, v0.4s
	fadd	v23.4s, v23.4s, v1.4s
	fadd	v24.4s, v24.4s, v2.4s
	fadd	v25.4s, v25.4s, v3.4s
	fadd	v26.4s, v26.4s, v4.4s
	fadd	v27.4s, v27.4s, v0.4s
	fadd	v28.4s, v28.4s, v1.4s
	fadd	v29.4s, v29.4s, v2.4s
	fadd	v30.4s, v30.4s, v3.4s
	fadd	v31.4s, v31.4s, v4.4s
	// clamp: fmax with dup(min), then fmin with dup(max); a NaN stays NaN, -0 < +0
.Lep_clamp:
	tbz	w9, #ISF_EP_BIT_CLAMP, .Lstore_tile
	add	x10, x6, #ISF_EP_MIN
	ld2r	{v5.4s, v6.4s}, [x10]
	fmax	v12.4s, v12.4s, v5.4s
	fmax	v13.4s, v13.4s, v5.4s
	fmax	v14.4s, v14.4s, v5.4s
	fmax	v15.4s, v15.4s, v5.4s
	fmax	v16.4s, v16.4s, v5.4s
	fmax	v17.4s, v17.4s, v5.4s
	fmax	v18.4s, v18.4s, v5.4s
	fmax	v19.4s, v19.4s, v5.4s
	fmax	v20.4s, v20.4s, v5.4s
	fmax	v21.4s, v21.4s, v5.4s
	fmax	v22.4s, v22.4s, v5.4s
	fmax	v23.4s, v23.4s, v5.4s
	fmax	v24.4s, v24.4s, v5.4s
	fmax	v25.4s, v25.4s, v5.4s
	fmax	v26.4s, v26.4s, v5.4s
	fmax	v27.4s, v27.4s, v5.4s
	fmax	v28.4s, v28.4s, v5.4s
	fmax	v29.4s, v29.4s, v5.4s
	fmax	v30.4s, v30.4s, v5.4s
	fmax	v31.4s, v31.4s, v5.4s
	fmin	v12.4s, v12.4s, v6.4s
	fmin	v13.4s, v13.4s, v6.4s
	fmin	v14.4s, v14.4s, v6.4s
	fmin	v15.4s, v15.4s, v6.4s
	fmin	v16.4s, v16.4s, v6.4s
	fmin	v17.4s, v17.4s, v6.4s
	fmin	v18.4s, v18.4s, v6.4s
	fmin	v19.4s, v19.4s, v6.4s
	fmin	v20.4s, v20.4s, v6.4s
	fmin	v21.4s, v21.4s, v6.4s
	fmin	v22.4s, v22.4s, v6.4s
	fmin	v23.4s, v23.4s, v6.4s
	fmin	v24.4s, v24.4s, v6.4s
	fmin	v25.4s, v25.4s, v6.4s
	fmin	v26.4s, v26.4s, v6.4s
	fmin	v27.4s, v27.4s, v6.4s
	fmin	v28.4s, v28.4s, v6.4s
	fmin	v29.4s, v29.4s, v6.4s
	fmin	v30.4s, v30.4s, v6.4s
	fmin	v31.4s, v31.4s, v6.4s
	b	.Lstore_tile
	.size	isf_ukernel_gemm_bf16_8x10x4_bf16, .-isf_ukernel_gemm_bf16_8x10x4_bf16

	.section	.note.GNU-stack,"",%progbits
