/* gemm_s8_4x8x8_i8mm
 *
 * int8 -> int32 GEMM micro-kernel, A32: 4x8 tile, vsmmla, 8 k steps per block (hand-written; ABI in
 * kernels/runtime/isf_internal.h: r0 k_blocks, r1 A panel, r2 B panel, r3 C, [sp] ldc in elements,
 * [sp, #4] accumulate, [sp, #8] epilogue; AAPCS hard-float, q4-q7 callee-saved).
 *
 * Per block A is 32 bytes (a01: rows 0, 1 x 8 k; a23: rows 2, 3) and B 64 bytes (b01, b23, b45, b67: two
 * columns x 8 k each): exactly vsmmla's operands.
 * q(8 + 4i + j) accumulates the 2x2 block rows 2i, 2i+1 x columns 2j, 2j+1 laid out [r0c0 r0c1 r1c0 r1c1]:
 * its low D register belongs to the even row, its high one to the odd row, so four vswp turn a row pair's
 * d(16 + 8i)..d(23 + 8i) into the two rows, each one vld1/vst1 of four D registers.
 * accumulate = 1 loads C and swaps it into block order first (exact in int32). The BIAS step starts the
 * accumulators from the bias too (added to the C rows before the swap with accumulate = 1), PARTIAL from the
 * partial sums' rows (+ bias, then the same swap): int32 addition wraps modulo 2^32, so adding them first gives
 * the bits the contract's sums + C (or partial) + bias does, at a load and a few moves instead of 8 additions at
 * the store. In block order the bias of columns 2j, 2j+1 is bias[2j..2j+1] in both D halves.
 *
 * The quantized store (ROW_OFFSET, TO_F32, TO_S8) runs after the store's swaps, on the 8 accumulators in row
 * order, one step at a time over the whole tile, with its parameters in q0-q3: quantized_store in
 * kernels/aarch32/isf_epilogue_a32.h, the same code as gemm_s8_4x8x4_dotprod's, whose rows sit in the same
 * registers (as are the starts from the bias or the partial sums and the store). AArch32 NEON runs with the
 * standard FPSCR, so a subnormal fp32 value flushes to zero where the scalar definition keeps it: only scales far
 * below any quantized model's (~1e-19) get there.
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
	.globl	isf_ukernel_gemm_s8_4x8x8_i8mm
	.type	isf_ukernel_gemm_s8_4x8x8_i8mm, %function
isf_ukernel_gemm_s8_4x8x8_i8mm:
	@ save q4-q7 (AAPCS: d8-d15 callee-saved); r12 = ldc in bytes
	vpush	{d8-d15}
	ldr	r12, [sp, #72]
	ldr	r12, [r12]
	tst	r12, #(STEP_BIAS | STEP_PARTIAL)
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
	zero_tile
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
	@ write the tile: four vswp per row pair put rows back together, one vst1 per row (int32, or fp32 from
	@ .Lquantized)
.Lstore:
	blocks_to_rows
	tile_store	72, d8-d15
	@ k_blocks even: the first block goes into the second register set, enter at O
.Leven:
	vld1.8	{d12-d15}, [r1:256]!
	vld1.8	{d4-d7}, [r2:256]!
	vld1.8	{d8-d11}, [r2:256]!
	lsr	r0, r0, #1
	b	.Lmid
	@ BIAS or PARTIAL (r12 = accumulate); PARTIAL comes with accumulate = 0 only (the contract)
.Lbias:
	bias_or_partial	72
	@ BIAS, accumulate = 0: every row pair starts from the bias
	ldr	r12, [r12, #ISF_EP_BIAS]
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
	b	.Lbegin
	@ BIAS, accumulate = 1 (r12 = ep): the bias row added to the C rows, then into block order as above
	bias_c	64
.Lblock_order:
	rows_to_blocks
.Lbegin:
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ PARTIAL (r12 = ep), accumulate = 0: the partial rows, + the bias row if asked, then into block order
	partial	64, .Lblock_order

	@ The quantized store (r0 = ep, r1 = steps, r12 = ldc * 4), each step over the whole tile in place
	quantized_store	d8-d15
	.size	isf_ukernel_gemm_s8_4x8x8_i8mm, .-isf_ukernel_gemm_s8_4x8x8_i8mm

	.section	.note.GNU-stack,"",%progbits