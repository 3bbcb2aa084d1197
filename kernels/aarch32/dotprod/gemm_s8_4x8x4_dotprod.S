/* gemm_s8_4x8x4_dotprod
 *
 * int8 -> int32 GEMM micro-kernel, A32: 4x8 tile, vsdot by scalar, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: r0 k_blocks, r1 A panel, r2 B panel, r3 C, [sp] ldc in elements,
 * [sp, #4] accumulate, [sp, #8] epilogue; AAPCS hard-float, q4-q7 callee-saved).
 *
 * Per block A is 16 bytes (one D register per row pair: lane 0 row 2p's 4 k values, lane 1 row 2p+1's) and
 * B 32 bytes (two Q registers, one column's 4 k values per 32-bit lane): one vsdot by scalar updates 4 C
 * elements of a row. c(r, 4j..4j+3) lives in q(8 + 2r + j), so a C row is d(16 + 4r)-d(19 + 4r): one
 * vld1/vst1. accumulate = 1 starts the accumulators from C (exact in int32). The BIAS step starts them from the
 * bias row too (from C + bias with accumulate = 1), PARTIAL from the partial sums' rows (+ bias): int32 addition
 * wraps modulo 2^32, so adding them first gives the bits the contract's sums + C (or partial) + bias does, and
 * with accumulate = 0 it costs a load, not 8 additions at the store.
 *
 * The quantized store (ROW_OFFSET, TO_F32, TO_S8) runs on the 8 accumulators after the last block, one step at a
 * time over the whole tile, with its parameters in q0-q3 (no callee-saved register beyond q4-q5, which the loop
 * needs anyway): quantized_store in kernels/aarch32/isf_epilogue_a32.h, shared with gemm_s8_4x8x8_i8mm, as are
 * the starts from the bias or the partial sums and the store. AArch32 NEON runs with the standard FPSCR, so a
 * subnormal fp32 value flushes to zero where the scalar definition keeps it: only scales far below any quantized
 * model's (~1e-19) get there.
 *
 * Software pipelining: both panels are double-buffered (A q0 / q1, B q2-q3 / q4-q5; the loop is unrolled twice:
 * E computes with q0, q2-q3 and first loads the next block into q1, q4-q5, O the other way round). The last
 * block is peeled (no loads), so nothing past the panels is read. k_blocks odd enters at E, even at O with
 * the first block in the second set; the loop runs k_blocks / 2 times. The panels start 64-byte aligned and a
 * block is 16 (A) or 32 (B) bytes, hence the :128 / :256 alignment hints.
 */

#include "kernels/aarch32/isf_epilogue_a32.h" /* from the source root: also from the .inst-encoded copy */

	.syntax	unified
	.arm
@ No .arch/.fpu directives: the build's -march/-mfpu (the variant's own flags) decide what assembles,
@ so an assembler held to an older -march rejects the extension instructions unless they are .inst words.

	.text
	.p2align	2
	.globl	isf_ukernel_gemm_s8_4x8x4_dotprod
	.type	isf_ukernel_gemm_s8_4x8x4_dotprod, %function
isf_ukernel_gemm_s8_4x8x4_dotprod:
	@ save q4-q5 (AAPCS: d8-d15 callee-saved); r12 = ldc in bytes
	vpush	{d8-d11}
	ldr	r12, [sp, #40]
	ldr	r12, [r12]
	tst	r12, #(STEP_BIAS | STEP_PARTIAL)
	ldr	r12, [sp, #36]
	bne	.Lbias
	cmp	r12, #0
	ldr	r12, [sp, #32]
	lsl	r12, r12, #2
	beq	.Lzero
	@ accumulate = 1: the accumulators start from C
	load_c
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ accumulate = 0: the accumulators start at zero
.Lzero:
	zero_tile
	cmp	r0, #0
	beq	.Lstore
	@ first block into registers; k_blocks odd enters the loop at E, even at O
.Lstart:
	tst	r0, #1
	beq	.Leven
	vld1.8	{d0, d1}, [r1:128]!
	vld1.8	{d4-d7}, [r2:256]!
	lsrs	r0, r0, #1
	beq	.Lfinal
	@ E: compute the block in the first register set, load the next block
.Lloop:
	vld1.8	{d2, d3}, [r1:128]!
	vld1.8	{d8-d11}, [r2:256]!
	vsdot.s8	q8, q2, d0[0]
	vsdot.s8	q9, q3, d0[0]
	vsdot.s8	q10, q2, d0[1]
	vsdot.s8	q11, q3, d0[1]
	vsdot.s8	q12, q2, d1[0]
	vsdot.s8	q13, q3, d1[0]
	vsdot.s8	q14, q2, d1[1]
	vsdot.s8	q15, q3, d1[1]
	@ O: the same with the second register set
.Lmid:
	vld1.8	{d0, d1}, [r1:128]!
	vld1.8	{d4-d7}, [r2:256]!
	vsdot.s8	q8, q4, d2[0]
	vsdot.s8	q9, q5, d2[0]
	vsdot.s8	q10, q4, d2[1]
	vsdot.s8	q11, q5, d2[1]
	vsdot.s8	q12, q4, d3[0]
	vsdot.s8	q13, q5, d3[0]
	vsdot.s8	q14, q4, d3[1]
	vsdot.s8	q15, q5, d3[1]
	subs	r0, r0, #1
	bne	.Lloop
	@ last block: compute only, nothing past the panels is read
.Lfinal:
	vsdot.s8	q8, q2, d0[0]
	vsdot.s8	q9, q3, d0[0]
	vsdot.s8	q10, q2, d0[1]
	vsdot.s8	q11, q3, d0[1]
	vsdot.s8	q12, q2, d1[0]
	vsdot.s8	q13, q3, d1[0]
	vsdot.s8	q14, q2, d1[1]
	vsdot.s8	q15, q3, d1[1]
	@ write the MRxNR tile, row stride ldc (int32, or fp32 from .Lquantized)
.Lstore:
	tile_store	40, d8-d11
	@ k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	vld1.8	{d2, d3}, [r1:128]!
	vld1.8	{d8-d11}, [r2:256]!
	lsr	r0, r0, #1
	b	.Lmid
	@ BIAS or PARTIAL (r12 = accumulate); PARTIAL comes with accumulate = 0 only (the contract)
.Lbias:
	bias_or_partial	40
	@ BIAS, accumulate = 0: every row starts from the bias row
	ldr	r12, [r12, #ISF_EP_BIAS]
	vld1.32	{d16-d19}, [r12]
	ldr	r12, [sp, #32]
	lsl	r12, r12, #2
	vmov	q10, q8
	vmov	q11, q9
	vmov	q12, q8
	vmov	q13, q9
	vmov	q14, q8
	vmov	q15, q9
	b	.Lbegin
	@ BIAS, accumulate = 1 (r12 = ep): the bias row added to every C row
	bias_c	32
.Lbegin:
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ PARTIAL (r12 = ep), accumulate = 0: the accumulators start from the partial rows, + the bias row if asked
	partial	32, .Lbegin

	@ The quantized store (r0 = ep, r1 = steps, r12 = ldc * 4), each step over the whole tile in place
	quantized_store	d8-d11
	.size	isf_ukernel_gemm_s8_4x8x4_dotprod, .-isf_ukernel_gemm_s8_4x8x4_dotprod

	.section	.note.GNU-stack,"",%progbits
