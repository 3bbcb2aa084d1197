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
 * order, one step at a time over the whole tile, with its parameters in q0-q3: ROW_OFFSET as vmla by the row's
 * scalar, then vcvt to fp32, the scales as separate vmul (never a fused multiply-add: the contract's separate
 * roundings) and the clamp as vmax then vmin, which are FMAX and FMIN (a NaN stays NaN, -0 < +0). AArch32 NEON
 * runs with the standard FPSCR, so a subnormal fp32 value flushes to zero where the scalar definition keeps it:
 * only scales far below any quantized model's (~1e-19) get there. TO_S8 rounds with vcvtn (ARMv8: nearest, ties
 * to even, saturating), then saturating zero point and narrowing to int8 and the int8 clamp: exact, as the
 * contract asks. The code is the same as gemm_s8_4x8x4_dotprod's, whose rows sit in the same registers.
 *
 * Software pipelining: the 8 accumulators, 2 A and 4 B registers leave 2 for a second A set (A q0-q1 / q6-q7;
 * the loop is unrolled twice: E computes with q0-q1 and first loads the next block's A into q6-q7, O the other
 * way round). B is reloaded in halves once dead: b01, b23 after their four products, b45, b67 after theirs. The
 * last block is peeled (no loads), so nothing past the panels is read. k_blocks odd enters at E, even at O with
 * the first A in q6-q7; the loop runs k_blocks / 2 times. The panels start 64-byte aligned and every load is
 * 32 bytes at a multiple of 32, hence the :256 alignment hints.
 */

#include "isf_epilogue_offsets.h"

@ The ISF_EPILOGUE_* step bits (an enum in isf_internal.h, which the assembler cannot read)
#define STEP_BIAS 1
#define STEP_CLAMP 2
#define STEP_PARTIAL 4
#define STEP_ROW_OFFSET 8
#define STEP_TO_F32 16
#define STEP_ROW_SCALE 32
#define STEP_OUT_BIAS 64
#define STEP_TO_S8 128

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
	@ write the tile: four vswp per row pair put rows back together, one vst1 per row (int32, or fp32 from
	@ .Lquantized)
.Lstore:
	vswp	d17, d18
	vswp	d18, d20
	vswp	d19, d22
	vswp	d22, d21
	vswp	d25, d26
	vswp	d26, d28
	vswp	d27, d30
	vswp	d30, d29
	ldr	r0, [sp, #72]
	ldr	r1, [r0]
	tst	r1, #(STEP_ROW_OFFSET | STEP_TO_F32 | STEP_TO_S8)
	bne	.Lquantized
.Lstore_rows:
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
	@ BIAS or PARTIAL (r12 = accumulate); PARTIAL comes with accumulate = 0 only (the contract)
.Lbias:
	cmp	r12, #0
	ldr	r12, [sp, #72]
	bne	.Lbias_c
	ldr	r12, [r12]
	tst	r12, #STEP_PARTIAL
	ldr	r12, [sp, #72]
	bne	.Lpartial
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
.Lbias_c:
	ldr	r12, [r12, #ISF_EP_BIAS]
	vld1.32	{d0-d3}, [r12]
	ldr	r12, [sp, #64]
	lsl	r12, r12, #2
	vld1.32	{d16-d19}, [r3], r12
	vld1.32	{d20-d23}, [r3], r12
	vld1.32	{d24-d27}, [r3], r12
	vld1.32	{d28-d31}, [r3], r12
	sub	r3, r3, r12, lsl #2
.Ladd_bias:
	vadd.i32	q8, q8, q0
	vadd.i32	q9, q9, q1
	vadd.i32	q10, q10, q0
	vadd.i32	q11, q11, q1
	vadd.i32	q12, q12, q0
	vadd.i32	q13, q13, q1
	vadd.i32	q14, q14, q0
	vadd.i32	q15, q15, q1
.Lblock_order:
	vswp	d22, d21
	vswp	d19, d22
	vswp	d18, d20
	vswp	d17, d18
	vswp	d30, d29
	vswp	d27, d30
	vswp	d26, d28
	vswp	d25, d26
.Lbegin:
	cmp	r0, #0
	bne	.Lstart
	b	.Lstore
	@ PARTIAL (r12 = ep), accumulate = 0: the partial rows, + the bias row if asked, then into block order
.Lpartial:
	@ r0-r3 are still the arguments: two more registers for the rows' pointer and stride
	push	{r4, r5}
	ldr	r4, [r12, #ISF_EP_PARTIAL]
	ldr	r5, [r12, #ISF_EP_PARTIAL_LD]
	lsl	r5, r5, #2
	vld1.32	{d16-d19}, [r4], r5
	vld1.32	{d20-d23}, [r4], r5
	vld1.32	{d24-d27}, [r4], r5
	vld1.32	{d28-d31}, [r4]
	ldr	r5, [r12]
	ldr	r4, [r12, #ISF_EP_BIAS]
	tst	r5, #STEP_BIAS
	beq	.Lpartial_done
	vld1.32	{d0-d3}, [r4]
	@ the flags of the BIAS test survive: pop, ldr and lsl (no s) leave them
.Lpartial_done:
	pop	{r4, r5}
	ldr	r12, [sp, #64]
	lsl	r12, r12, #2
	bne	.Ladd_bias
	b	.Lblock_order

	@ The quantized store (r0 = ep, r1 = steps, r12 = ldc * 4), each step over the whole tile in place.
	@ ROW_OFFSET: row i += row_offset[i] * col_sum, int32 wrapping
.Lquantized:
	tst	r1, #STEP_ROW_OFFSET
	beq	.Lconvert
	ldr	r2, [r0, #ISF_EP_ROW_OFFSET]
	vld1.32	{d0-d1}, [r2]
	ldr	r2, [r0, #ISF_EP_COL_SUM]
	vld1.32	{d4-d7}, [r2]
	vmla.i32	q8, q2, d0[0]
	vmla.i32	q9, q3, d0[0]
	vmla.i32	q10, q2, d0[1]
	vmla.i32	q11, q3, d0[1]
	vmla.i32	q12, q2, d1[0]
	vmla.i32	q13, q3, d1[0]
	vmla.i32	q14, q2, d1[1]
	vmla.i32	q15, q3, d1[1]
	@ ROW_OFFSET alone keeps the int32 store
.Lconvert:
	tst	r1, #(STEP_TO_F32 | STEP_TO_S8)
	beq	.Lstore_rows
	vcvt.f32.s32	q8, q8
	vcvt.f32.s32	q9, q9
	vcvt.f32.s32	q10, q10
	vcvt.f32.s32	q11, q11
	vcvt.f32.s32	q12, q12
	vcvt.f32.s32	q13, q13
	vcvt.f32.s32	q14, q14
	vcvt.f32.s32	q15, q15
	ldr	r2, [r0, #ISF_EP_COL_SCALE]
	vld1.32	{d4-d7}, [r2]
	tst	r1, #STEP_TO_S8
	bne	.Lto_s8
	@ TO_F32: the row scale (when asked) rounds before the column scale, as the contract orders them
	tst	r1, #STEP_ROW_SCALE
	beq	.Lcol_scale
	ldr	r2, [r0, #ISF_EP_ROW_SCALE]
	vld1.32	{d0-d1}, [r2]
	vmul.f32	q8, q8, d0[0]
	vmul.f32	q9, q9, d0[0]
	vmul.f32	q10, q10, d0[1]
	vmul.f32	q11, q11, d0[1]
	vmul.f32	q12, q12, d1[0]
	vmul.f32	q13, q13, d1[0]
	vmul.f32	q14, q14, d1[1]
	vmul.f32	q15, q15, d1[1]
.Lcol_scale:
	vmul.f32	q8, q8, q2
	vmul.f32	q9, q9, q3
	vmul.f32	q10, q10, q2
	vmul.f32	q11, q11, q3
	vmul.f32	q12, q12, q2
	vmul.f32	q13, q13, q3
	vmul.f32	q14, q14, q2
	vmul.f32	q15, q15, q3
	tst	r1, #STEP_OUT_BIAS
	beq	.Lclamp
	ldr	r2, [r0, #ISF_EP_OUT_BIAS]
	vld1.32	{d4-d7}, [r2]
	vadd.f32	q8, q8, q2
	vadd.f32	q9, q9, q3
	vadd.f32	q10, q10, q2
	vadd.f32	q11, q11, q3
	vadd.f32	q12, q12, q2
	vadd.f32	q13, q13, q3
	vadd.f32	q14, q14, q2
	vadd.f32	q15, q15, q3
.Lclamp:
	tst	r1, #STEP_CLAMP
	beq	.Lstore_rows
	ldr	r2, [r0, #ISF_EP_MIN]
	vdup.32	q2, r2
	ldr	r2, [r0, #ISF_EP_MAX]
	vdup.32	q3, r2
	vmax.f32	q8, q8, q2
	vmax.f32	q9, q9, q2
	vmax.f32	q10, q10, q2
	vmax.f32	q11, q11, q2
	vmax.f32	q12, q12, q2
	vmax.f32	q13, q13, q2
	vmax.f32	q14, q14, q2
	vmax.f32	q15, q15, q2
	vmin.f32	q8, q8, q3
	vmin.f32	q9, q9, q3
	vmin.f32	q10, q10, q3
	vmin.f32	q11, q11, q3
	vmin.f32	q12, q12, q3
	vmin.f32	q13, q13, q3
	vmin.f32	q14, q14, q3
	vmin.f32	q15, q15, q3
	b	.Lstore_rows
	@ TO_S8: (float)r * col_scale, nearest even (saturating to int32), + zero point and narrowing to int8, all
	@ saturating, then the int8 clamp: exactly clamp(rne(f) + out_zp, qmin, qmax) in unbounded integers
.Lto_s8:
	vmul.f32	q8, q8, q2
	vmul.f32	q9, q9, q3
	vmul.f32	q10, q10, q2
	vmul.f32	q11, q11, q3
	vmul.f32	q12, q12, q2
	vmul.f32	q13, q13, q3
	vmul.f32	q14, q14, q2
	vmul.f32	q15, q15, q3
	vcvtn.s32.f32	q8, q8
	vcvtn.s32.f32	q9, q9
	vcvtn.s32.f32	q10, q10
	vcvtn.s32.f32	q11, q11
	vcvtn.s32.f32	q12, q12
	vcvtn.s32.f32	q13, q13
	vcvtn.s32.f32	q14, q14
	vcvtn.s32.f32	q15, q15
	ldr	r2, [r0, #ISF_EP_OUT_ZP]
	vdup.32	q0, r2
	vqadd.s32	q8, q8, q0
	vqadd.s32	q9, q9, q0
	vqadd.s32	q10, q10, q0
	vqadd.s32	q11, q11, q0
	vqadd.s32	q12, q12, q0
	vqadd.s32	q13, q13, q0
	vqadd.s32	q14, q14, q0
	vqadd.s32	q15, q15, q0
	@ row r ends in d(16 + r): narrowed through q0-q1 so no narrowing overlaps its own source
	vqmovn.s32	d0, q8
	vqmovn.s32	d1, q9
	vqmovn.s32	d2, q10
	vqmovn.s32	d3, q11
	vqmovn.s16	d16, q0
	vqmovn.s16	d17, q1
	vqmovn.s32	d0, q12
	vqmovn.s32	d1, q13
	vqmovn.s32	d2, q14
	vqmovn.s32	d3, q15
	vqmovn.s16	d18, q0
	vqmovn.s16	d19, q1
	ldr	r2, [r0, #ISF_EP_QMIN]
	vdup.8	q0, r2
	ldr	r2, [r0, #ISF_EP_QMAX]
	vdup.8	q1, r2
	vmax.s8	q8, q8, q0
	vmax.s8	q9, q9, q0
	vmin.s8	q8, q8, q1
	vmin.s8	q9, q9, q1
	@ int8 C: ldc bytes between rows, 8 bytes each
	lsr	r12, r12, #2
	vst1.8	{d16}, [r3], r12
	vst1.8	{d17}, [r3], r12
	vst1.8	{d18}, [r3], r12
	vst1.8	{d19}, [r3]
	vpop	{d8-d15}
	bx	lr
	.size	isf_ukernel_gemm_s8_4x8x8_i8mm, .-isf_ukernel_gemm_s8_4x8x8_i8mm

	.section	.note.GNU-stack,"",%progbits
