/* gemm_bf16_4x8x4_bf16
 *
 * bfloat16 -> fp32 GEMM micro-kernel, A32: 4x8 tile, vmmla.bf16, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: r0 k_blocks, r1 A panel, r2 B panel, r3 C, [sp] ldc in elements,
 * [sp, #4] accumulate, [sp, #8] epilogue: BIAS and CLAMP; AAPCS hard-float, q4-q7 callee-saved).
 *
 * Per block A is 32 bytes (a01: rows 0, 1 x 4 k; a23: rows 2, 3) and B 64 bytes (b01, b23, b45, b67: two
 * columns x 4 k each): exactly vmmla.bf16's operands. Like bfmmla it flushes subnormals and rounds its
 * intermediate sums to odd.
 * q(8 + 4i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out [r0c0 r0c1 r1c0 r1c1]:
 * its low D register belongs to the even row, its high one to the odd row, so four vswp turn a row pair's
 * d(16 + 8i)..d(23 + 8i) into the two rows, each one vld1/vst1 of four D registers.
 * Accumulators start at zero and accumulate = 1 adds C at the store, as the C version does (same
 * results bit for bit). The store takes one branch when accumulate or an epilogue step is asked: C, then the bias
 * row, then the clamp (vmax/vmin with the bounds in every lane) on the rows, then the plain store. Advanced SIMD
 * in A32 always runs with flush-to-zero and the default NaN (as vmmla and the C addition already do): a
 * subnormal bias or C value counts as zero and a NaN comes out as the default NaN. The swaps, the clamp and the
 * store are kernels/aarch32/isf_epilogue_a32.h's, shared with the int8 kernels.
 *
 * Software pipelining: the 8 accumulators, 2 A and 4 B registers leave 2 for a second A set (A q0-q1 / q6-q7;
 * the loop is unrolled twice: E computes with q0-q1 and first loads the next block's A into q6-q7, O the other
 * way round). B is reloaded in halves once dead: b01, b23 after their four products, b45, b67 after theirs. The
 * last block is peeled (no loads), so nothing past the panels is read. k_blocks odd enters at E, even at O with
 * the first A in q6-q7; the loop runs k_blocks / 2 times. The panels start 64-byte aligned and every load is
 * 32 bytes at a multiple of 32, hence the :256 alignment hints.
 */

#include "kernels/aarch32/isf_epilogue_a32.h" /* from the source root: also from the .inst-encoded copy */

	.syntax	unified
	.arm
@ No .arch/.fpu directives: the build's -march/-mfpu (the variant's own flags) decide what assembles,
@ so an assembler held to an older -march rejects the extension instructions unless they are .inst words.

	.text
	.p2align	2
	.globl	isf_ukernel_gemm_bf16_4x8x4_bf16
	.type	isf_ukernel_gemm_bf16_4x8x4_bf16, %function
isf_ukernel_gemm_bf16_4x8x4_bf16:
	@ save q4-q7 (AAPCS: d8-d15 callee-saved); r12 = ldc in bytes
	vpush	{d8-d15}
	ldr	r12, [sp, #68]
	cmp	r12, #0
	ldr	r12, [sp, #64]
	lsl	r12, r12, #2
	zero_tile
	cmp	r0, #0
	beq	.Lstore
	@ first block into registers; k_blocks odd enters the loop at E, even at O
.Lstart:
	tst	r0, #1
	beq	.Leven
	vld1.16	{d0-d3}, [r1:256]!
	vld1.16	{d4-d7}, [r2:256]!
	vld1.16	{d8-d11}, [r2:256]!
	lsrs	r0, r0, #1
	beq	.Lfinal
	@ E: compute the block in the first register set, load the next block
.Lloop:
	vld1.16	{d12-d15}, [r1:256]!
	vmmla.bf16	q8, q0, q2
	vmmla.bf16	q12, q1, q2
	vmmla.bf16	q9, q0, q3
	vmmla.bf16	q13, q1, q3
	vld1.16	{d4-d7}, [r2:256]!
	vmmla.bf16	q10, q0, q4
	vmmla.bf16	q14, q1, q4
	vmmla.bf16	q11, q0, q5
	vmmla.bf16	q15, q1, q5
	vld1.16	{d8-d11}, [r2:256]!
	@ O: the same with the second register set
.Lmid:
	vld1.16	{d0-d3}, [r1:256]!
	vmmla.bf16	q8, q6, q2
	vmmla.bf16	q12, q7, q2
	vmmla.bf16	q9, q6, q3
	vmmla.bf16	q13, q7, q3
	vld1.16	{d4-d7}, [r2:256]!
	vmmla.bf16	q10, q6, q4
	vmmla.bf16	q14, q7, q4
	vmmla.bf16	q11, q6, q5
	vmmla.bf16	q15, q7, q5
	vld1.16	{d8-d11}, [r2:256]!
	subs	r0, r0, #1
	bne	.Lloop
	@ last block: compute only, nothing past the panels is read
.Lfinal:
	vmmla.bf16	q8, q0, q2
	vmmla.bf16	q12, q1, q2
	vmmla.bf16	q9, q0, q3
	vmmla.bf16	q13, q1, q3
	vmmla.bf16	q10, q0, q4
	vmmla.bf16	q14, q1, q4
	vmmla.bf16	q11, q0, q5
	vmmla.bf16	q15, q1, q5
	@ write the tile: four vswp per row pair put rows back together, one vst1 per row
.Lstore:
	blocks_to_rows
	ldr	r2, [sp, #72]
	ldr	r0, [r2]
	ldr	r1, [sp, #68]
	orrs	r0, r0, r1
	bne	.Lepilogue
	store_rows	d8-d15
	@ accumulate = 1 or epilogue steps (r0 = steps | accumulate, r2 = ep): C, bias and clamp on the rows
.Lepilogue:
	cmp	r1, #0
	beq	.Lep_bias
	@ accumulate = 1: C + A*B, in the order the C version adds
	mov	r1, r3
	vld1.32	{d0-d3}, [r1], r12
	vld1.32	{d4-d7}, [r1], r12
	vadd.f32	q8, q8, q0
	vadd.f32	q9, q9, q1
	vadd.f32	q10, q10, q2
	vadd.f32	q11, q11, q3
	vld1.32	{d0-d3}, [r1], r12
	vld1.32	{d4-d7}, [r1], r12
	vadd.f32	q12, q12, q0
	vadd.f32	q13, q13, q1
	vadd.f32	q14, q14, q2
	vadd.f32	q15, q15, q3
.Lep_bias:
	ldr	r0, [r2, #ISF_EP_STEPS]
	tst	r0, #STEP_BIAS
	beq	.Lep_clamp
	ldr	r1, [r2, #ISF_EP_BIAS]
	vld1.32	{d0-d3}, [r1]
	by_column	vadd.f32, q0, q1
	@ clamp: vmax with min in every lane, then vmin with max
.Lep_clamp:
	tst	r0, #STEP_CLAMP
	beq	.Lstore_rows
	add	r1, r2, #ISF_EP_MIN
	vld1.32	{d4[], d5[]}, [r1]!
	vld1.32	{d6[], d7[]}, [r1]
	clamp	q2, q3
	b	.Lstore_rows
	@ k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	vld1.16	{d12-d15}, [r1:256]!
	vld1.16	{d4-d7}, [r2:256]!
	vld1.16	{d8-d11}, [r2:256]!
	lsr	r0, r0, #1
	b	.Lmid
	.size	isf_ukernel_gemm_bf16_4x8x4_bf16, .-isf_ukernel_gemm_bf16_4x8x4_bf16

	.section	.note.GNU-stack,"",%progbits