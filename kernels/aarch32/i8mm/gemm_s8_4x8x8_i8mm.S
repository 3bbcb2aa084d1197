/* gemm_s8_4x8x8_i8mm
 *
 * int8 -> int32 GEMM micro-kernel, A32: 4x8 tile, vsmmla, 8 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: r0 k_blocks, r1 A panel, r2 B panel, r3 C, [sp] ldc in elements,
 * [sp, #4] accumulate, [sp, #8] epilogue: BIAS only, the driver never asks an int32 kernel to clamp; AAPCS
 * hard-float, q4-q7 callee-saved).
 *
 * Per block A is 32 bytes (a01: rows 0, 1 x 8 k; a23: rows 2, 3) and B 64 bytes (b01, b23, b45, b67: two
 * columns x 8 k each): exactly vsmmla's operands.
 * q(8 + 4i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out [r0c0 r0c1 r1c0 r1c1]:
 * its low D register belongs to the even row, its high one to the odd row, so four vswp turn a row pair's
 * d(16 + 8i)..d(23 + 8i) into the two rows, each one vld1/vst1 of four D registers.
 * accumulate = 1 loads C and swaps it into block order first (exact in int32). The BIAS step starts the
 * accumulators from the bias too (added to the C rows before the swap with accumulate = 1): int32 addition wraps
 * modulo 2^32, so adding it first gives the bits the contract's sums + C + bias does, at a load and a few moves
 * instead of 8 additions at the store. In block order the bias of columns 2j, 2j+1 is bias[2j..2j+1] in both D
 * halves.
 *
 * Software pipelining: the 8 accumulators, 2 A and 4 B registers leave 2 for a second A set (A q0-q1 / q6-q7;
 * the loop is unrolled twice: E computes with q0-q1 and first loads the next block's A into q6-q7, O the other
 * way round). B is reloaded in halves once dead: b01, b23 after their four products, b45, b67 after theirs. The
 * last block is peeled (no loads), so nothing past the panels is read. k_blocks odd enters at E, even at O with
 * the first A in q6-q7; the loop runs k_blocks / 2 times. The panels start 64-byte aligned and every load is
 * 32 bytes at a multiple of 32, hence the :256 alignment hints.
 */

	.syntax	unified
	.arm
@ No .arch/.fpu directives: the build's -march/-mfpu (the variant's own flags) decide what assembles,
@ so an assembler held to an older -march rejects the extension instructions unless they are .inst words.

	.text
	.p2align	2
	.globl	isf_ukernel_gemm_s8_4x8x8_i8mm
	.type	isf_ukernel_gemm_s8_4x8x8_i8mm, %function
isf_ukernel_gemm_s8_4x8x8_i8mm:
	@ save q4-q7 (AAPCS: d8-d15 callee-saved); r12 = ldc in bytes
	vpush	{d8-d15}
	ldr	r12, [sp, #72]
	ldr	r12, [r12]
	tst	r12, #1
	ldr	r12, [sp, #68]
	bne	.Lbias
	cmp	r12, #0
	ldr	r12, [sp, #64]
	lsl	r12, r12, #2
	beq	.Lzero
	@ accumulate = 1: the accumulators start from C
	vld1.32	{d16-d19}, [r3], r12
	vld1.32	{d20-d23}, [r3], r12
	@ C rows into block order: the four vswp per row pair of the store, in reverse
	vswp	d22, d21
	vswp	d19, d22
	vswp	d18, d20
	vswp	d17, d18
	vld1.32	{d24-d27}, [r3], r12
	vld1.32	{d28-d31}, [r3], r12
	vswp	d30, d29
	vswp	d27, d30
	vswp	d26, d28
	vswp	d25, d26
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
	vld1.8	{d0-d3}, [r1:256]!
	vld1.8	{d4-d7}, [r2:256]!
	vld1.8	{d8-d11}, [r2:256]!
	lsrs	r0, r0, #1
	beq	.Lfinal
@ isf-hot-loop-begin
	@ E: compute the block in the first register set, load the next block
.Lloop:
	vld1.8	{d12-d15}, [r1:256]!
	vsmmla.s8	q8, q0, q2
	vsmmla.s8	q12, q1, q2
	vsmmla.s8	q9, q0, q3
	vsmmla.s8	q13, q1, q3
	vld1.8	{d4-d7}, [r2:256]!
	vsmmla.s8	q10, q0, q4
	vsmmla.s8	q14, q1, q4
	vsmmla.s8	q11, q0, q5
	vsmmla.s8	q15, q1, q5
	vld1.8	{d8-d11}, [r2:256]!
	@ O: the same with the second register set
.Lmid:
	vld1.8	{d0-d3}, [r1:256]!
	vsmmla.s8	q8, q6, q2
	vsmmla.s8	q12, q7, q2
	vsmmla.s8	q9, q6, q3
	vsmmla.s8	q13, q7, q3
	vld1.8	{d4-d7}, [r2:256]!
	vsmmla.s8	q10, q6, q4
	vsmmla.s8	q14, q7, q4
	vsmmla.s8	q11, q6, q5
	vsmmla.s8	q15, q7, q5
	vld1.8	{d8-d11}, [r2:256]!
	subs	r0, r0, #1
	bne	.Lloop
@ isf-hot-loop-end
	@ last block: compute only, nothing past the panels is read
.Lfinal:
	vsmmla.s8	q8, q0, q2
	vsmmla.s8	q12, q1, q2
	vsmmla.s8	q9, q0, q3
	vsmmla.s8	q13, q1, q3
	vsmmla.s8	q10, q0, q4
	vsmmla.s8	q14, q1, q4
	vsmmla.s8	q11, q0, q5
	vsmmla.s8	q15, q1, q5
	@ write the tile: four vswp per row pair put rows back together, one vst1 per row
.Lstore:
	vswp	d17, d18
	vswp	d18, d20
	vswp	d19, d22
	vswp	d22, d21
	vswp	d25, d26
	vswp	d26, d28
	vswp	d27, d30
	vswp	d30, d29
	vst1.32	{d16-d19}, [r3], r12
	vst1.32	{d20-d23}, [r3], r12
	vst1.32	{d24-d27}, [r3], r12
	vst1.32	{d28-d31}, [r3], r12
	vpop	{d8-d15}
	bx	lr
	@ k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	vld1.8	{d12-d15}, [r1:256]!
	vld1.8	{d4-d7}, [r2:256]!
	vld1.8	{d8-d11}, [r2:256]!
	lsr	r0, r0, #1
	b	.Lmid
	@ BIAS (r12 = accumulate), accumulate = 0: every row pair starts from the bias
.Lbias:
	cmp	r12, #0
	ldr	r12, [sp, #72]
	ldr	r12, [r12, #16]
	bne	.Lbias_c
	vld1.32	{d0-d3}, [r12]
	ldr	r12, [sp, #64]
	lsl	r12, r12, #2
	vmov	d16, d0
	vmov	d17, d0
	vmov	d18, d1
	vmov	d19, d1
	vmov	d20, d2
	vmov	d21, d2
	vmov	d22, d3
	vmov	d23, d3
	vmov	q12, q8
	vmov	q13, q9
	vmov	q14, q10
	vmov	q15, q11
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ BIAS, accumulate = 1: the bias row added to the C rows, then into block order as above
.Lbias_c:
	vld1.32	{d0-d3}, [r12]
	ldr	r12, [sp, #64]
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
	vswp	d22, d21
	vswp	d19, d22
	vswp	d18, d20
	vswp	d17, d18
	vswp	d30, d29
	vswp	d27, d30
	vswp	d26, d28
	vswp	d25, d26
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	.size	isf_ukernel_gemm_s8_4x8x8_i8mm, .-isf_ukernel_gemm_s8_4x8x8_i8mm

	.section	.note.GNU-stack,"",%progbits
