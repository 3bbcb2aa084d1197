/* gemm_s8_4x8x4_dotprod
 *
 * int8 -> int32 GEMM micro-kernel, A32: 4x8 tile, vsdot by scalar, 4 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: r0 k_blocks, r1 A panel, r2 B panel, r3 C, [sp] ldc in elements,
 * [sp, #4] accumulate, [sp, #8] epilogue: BIAS only, the driver never asks an int32 kernel to clamp; AAPCS
 * hard-float, q4-q7 callee-saved).
 *
 * Per block A is 16 bytes (one D register per row pair: lane 0 row 2p's 4 k values, lane 1 row 2p+1's) and
 * B 32 bytes (two Q registers, one column's 4 k values per 32-bit lane): one vsdot by scalar updates 4 C
 * elements of a row. c(r, 4j..4j+3) lives in q(8 + 2r + j), so a C row is d(16 + 4r)-d(19 + 4r): one
 * vld1/vst1. accumulate = 1 starts the accumulators from C (exact in int32). The BIAS step starts them from the
 * bias row too (from C + bias with accumulate = 1): int32 addition wraps modulo 2^32, so adding it first gives the
 * bits the contract's sums + C + bias does, and with accumulate = 0 it costs a load, not 8 additions at the store.
 *
 * Software pipelining: both panels are double-buffered (A q0 / q1, B q2-q3 / q4-q5; the loop is unrolled twice:
 * E computes with q0, q2-q3 and first loads the next block into q1, q4-q5, O the other way round). The last
 * block is peeled (no loads), so nothing past the panels is read. k_blocks odd enters at E, even at O with
 * the first block in the second set; the loop runs k_blocks / 2 times. The panels start 64-byte aligned and a
 * block is 16 (A) or 32 (B) bytes, hence the :128 / :256 alignment hints.
 */

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
	tst	r12, #1
	ldr	r12, [sp, #36]
	bne	.Lbias
	cmp	r12, #0
	ldr	r12, [sp, #32]
	lsl	r12, r12, #2
	beq	.Lzero
	@ accumulate = 1: the accumulators start from C
	vld1.32	{d16-d19}, [r3], r12
	vld1.32	{d20-d23}, [r3], r12
	vld1.32	{d24-d27}, [r3], r12
	vld1.32	{d28-d31}, [r3], r12
	sub	r3, r3, r12, lsl #2
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ accumulate = 0: the accumulators start at zero
.Lzero:
	vmov.i32	q8, #0
	vmov.i32	q9, #0
	vmov.i32	q10, #0
	vmov.i32	q11, #0
	vmov.i32	q12, #0
	vmov.i32	q13, #0
	vmov.i32	q14, #0
	vmov.i32	q15, #0
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
@ isf-hot-loop-begin
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
@ isf-hot-loop-end
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
	@ write the MRxNR tile, row stride ldc
.Lstore:
	vst1.32	{d16-d19}, [r3], r12
	vst1.32	{d20-d23}, [r3], r12
	vst1.32	{d24-d27}, [r3], r12
	vst1.32	{d28-d31}, [r3], r12
	vpop	{d8-d11}
	bx	lr
	@ k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	vld1.8	{d2, d3}, [r1:128]!
	vld1.8	{d8-d11}, [r2:256]!
	lsr	r0, r0, #1
	b	.Lmid
	@ BIAS (r12 = accumulate), accumulate = 0: every row starts from the bias row
.Lbias:
	cmp	r12, #0
	ldr	r12, [sp, #40]
	ldr	r12, [r12, #16]
	bne	.Lbias_c
	vld1.32	{d16-d19}, [r12]
	ldr	r12, [sp, #32]
	lsl	r12, r12, #2
	vmov	q10, q8
	vmov	q11, q9
	vmov	q12, q8
	vmov	q13, q9
	vmov	q14, q8
	vmov	q15, q9
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ BIAS, accumulate = 1: the bias row added to every C row
.Lbias_c:
	vld1.32	{d0-d3}, [r12]
	ldr	r12, [sp, #32]
	lsl	r12, r12, #2
	vld1.32	{d16-d19}, [r3], r12
	vld1.32	{d20-d23}, [r3], r12
	vld1.32	{d24-d27}, [r3], r12
	vld1.32	{d28-d31}, [r3], r12
	sub	r3, r3, r12, lsl #2
	vadd.i32	q8, q8, q0
	vadd.i32	q9, q9, q1
	vadd.i32	q10, q10, q0
	vadd.i32	q11, q11, q1
	vadd.i32	q12, q12, q0
	vadd.i32	q13, q13, q1
	vadd.i32	q14, q14, q0
	vadd.i32	q15, q15, q1
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	.size	isf_ukernel_gemm_s8_4x8x4_dotprod, .-isf_ukernel_gemm_s8_4x8x4_dotprod

	.section	.note.GNU-stack,"",%progbits
