/* gemm_f32_4x16_sme
 *
 * fp32 GEMM micro-kernel with SME (SME1, no SME2; no FEAT_SME_FA64): a 1VL x 4VL tile, MR = SVL/32 and
 * NR = 4 x SVL/32 floats (4 x 16 at SVL 128 bits, 16 x 64 at 512, 64 x 256 at 2048), KR = 1, fmopa into four ZA
 * tiles (hand-written; ABI in
 * kernels/runtime/isf_internal.h: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements, w5 accumulate,
 * x6 epilogue: BIAS and CLAMP).
 *
 * Per k step A is one streaming vector (the MR rows) and B is NR floats, four vectors: za<t>.s gains the outer
 * product of A's column with B's vector t, so it holds columns [t x SVL/32, (t + 1) x SVL/32) of the tile. Four
 * tiles rather than one so that each B element loaded is used by a single fmopa of full width and the four
 * fmopa of a step are independent (they overlap in the SME unit). Every row of every tile is used: MR grows with
 * the SVL as NR does (kernels/runtime/isf_internal.h). The SME2 kernels (gemm_f32_8x8_sme2's 2VL x 2VL) are
 * preferred where SME2 is; this one serves SME1 cores.
 *
 * The call is a normal AAPCS64 one: entered non-streaming with ZA off, the kernel runs smstart itself and
 * smstop before it returns, so ZA is off again and the caller saves nothing (no lazy-save: TPIDR2_EL0 is not
 * touched). smstart and smstop zero every Z and P register, so d8-d15 are saved on the stack before and restored
 * after. Between them only SME and streaming SVE (no NEON, no gathers, no FFR: they fault without FA64, as on
 * Apple M4); the epilogue's fields are read into general registers before smstart so that nothing scalar FP
 * has to survive it. Two k steps per iteration with two register sets, so each step's loads are issued a step
 * ahead of its fmopa; an odd k_blocks does its first step alone and the last two steps are peeled (no loads after
 * them): nothing past the panels is read at any SVL.
 *
 * The store: ZA's rows go straight to C (st1w of a ZA slice) when there is neither accumulate nor an epilogue
 * step. Otherwise each row is moved to Z registers (mova), old C is added after the sums (accumulate, as the
 * other kernels do), then bias, then FMAX/FMIN with the bounds (IEEE maximum/minimum: a NaN stays NaN, -0 < +0).
 * A missing step is applied as its identity rather than branched around per row: bias -0.0 (x + -0 = x for
 * every x, -0 included, in the FPCR's default rounding to nearest) and bounds -Inf/+Inf (fmax(x, -Inf) =
 * fmin(x, +Inf) = x, NaN included; every value here comes from arithmetic, so no signalling NaN is quietened that
 * would not have been).
 */

#include "isf_epilogue_offsets.h"

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_f32_4x16_sme
	.type	isf_ukernel_gemm_f32_4x16_sme, %function
isf_ukernel_gemm_f32_4x16_sme:
	// smstart/smstop zero z8-z15, whose low halves the caller keeps (AAPCS64)
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	// x4: ldc in bytes
	lsl	x4, x4, #2
	// w9 = steps; the bounds (w10 lo, w11 hi) and bias pointer (x14) in general registers, which smstart keeps
	ldr	w9, [x6, #ISF_EP_STEPS]
	mov	w10, #0xff800000
	mov	w11, #0x7f800000
	tbz	w9, #ISF_EP_BIT_CLAMP, 1f
	ldp	w10, w11, [x6, #ISF_EP_MIN]
1:	ldr	x14, [x6, #ISF_EP_BIAS]
	smstart
	// smstart from ZA off already zeroes it; explicit, so the sums never depend on how the kernel was entered
	zero	{za}
	// p0: a whole vector (A, B, C, the store)
	ptrue	p0.s
	cbz	x0, .Lstore
	tbz	x0, #0, 1f
	// k_blocks odd: one step alone, leaving an even count for the pipelined loop
	ld1w	{z0.s}, p0/z, [x1]
	ld1w	{z4.s}, p0/z, [x2]
	ld1w	{z5.s}, p0/z, [x2, #1, mul vl]
	ld1w	{z6.s}, p0/z, [x2, #2, mul vl]
	ld1w	{z7.s}, p0/z, [x2, #3, mul vl]
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z0.s, z6.s
	fmopa	za3.s, p0/m, p0/m, z0.s, z7.s
	addvl	x1, x1, #1
	addvl	x2, x2, #4
	subs	x0, x0, #1
	b.eq	.Lstore
1:	ld1w	{z0.s}, p0/z, [x1]
	ld1w	{z4.s}, p0/z, [x2]
	ld1w	{z5.s}, p0/z, [x2, #1, mul vl]
	ld1w	{z6.s}, p0/z, [x2, #2, mul vl]
	ld1w	{z7.s}, p0/z, [x2, #3, mul vl]
	subs	x0, x0, #2
	b.eq	.Ltail
	// two steps: the odd one's loads (z1, z8-z11) go out before the even one's fmopa, the next even one's
	// (z0, z4-z7) before the odd one's fmopa
.Lloop:
	ld1w	{z1.s}, p0/z, [x1, #1, mul vl]
	ld1w	{z8.s}, p0/z, [x2, #4, mul vl]
	ld1w	{z9.s}, p0/z, [x2, #5, mul vl]
	ld1w	{z10.s}, p0/z, [x2, #6, mul vl]
	ld1w	{z11.s}, p0/z, [x2, #7, mul vl]
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z0.s, z6.s
	fmopa	za3.s, p0/m, p0/m, z0.s, z7.s
	addvl	x1, x1, #2
	addvl	x2, x2, #8
	ld1w	{z0.s}, p0/z, [x1]
	ld1w	{z4.s}, p0/z, [x2]
	ld1w	{z5.s}, p0/z, [x2, #1, mul vl]
	ld1w	{z6.s}, p0/z, [x2, #2, mul vl]
	ld1w	{z7.s}, p0/z, [x2, #3, mul vl]
	fmopa	za0.s, p0/m, p0/m, z1.s, z8.s
	fmopa	za1.s, p0/m, p0/m, z1.s, z9.s
	fmopa	za2.s, p0/m, p0/m, z1.s, z10.s
	fmopa	za3.s, p0/m, p0/m, z1.s, z11.s
	subs	x0, x0, #2
	b.ne	.Lloop
	// the last two steps: no loads beyond them, so nothing past the panels is read
.Ltail:
	ld1w	{z1.s}, p0/z, [x1, #1, mul vl]
	ld1w	{z8.s}, p0/z, [x2, #4, mul vl]
	ld1w	{z9.s}, p0/z, [x2, #5, mul vl]
	ld1w	{z10.s}, p0/z, [x2, #6, mul vl]
	ld1w	{z11.s}, p0/z, [x2, #7, mul vl]
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z0.s, z6.s
	fmopa	za3.s, p0/m, p0/m, z0.s, z7.s
	fmopa	za0.s, p0/m, p0/m, z1.s, z8.s
	fmopa	za1.s, p0/m, p0/m, z1.s, z9.s
	fmopa	za2.s, p0/m, p0/m, z1.s, z10.s
	fmopa	za3.s, p0/m, p0/m, z1.s, z11.s
	// write the MR x NR tile, row stride ldc; ZA tile t's columns start t x SVL/32 floats in (x7, x13, x15); w16
	// counts the rows (MR = SVL/32)
.Lstore:
	mov	w12, #0
	cntw	x16
	orr	w7, w9, w5
	cbnz	w7, .Lepilogue
	cntw	x7
	add	x13, x7, x7
	add	x15, x13, x7
6:	st1w	{za0h.s[w12, 0]}, p0, [x3]
	st1w	{za1h.s[w12, 0]}, p0, [x3, x7, lsl #2]
	st1w	{za2h.s[w12, 0]}, p0, [x3, x13, lsl #2]
	st1w	{za3h.s[w12, 0]}, p0, [x3, x15, lsl #2]
	add	x3, x3, x4
	add	w12, w12, #1
	cmp	w12, w16
	b.ne	6b
	b	.Ldone
	// accumulate or steps: z16-z19 bias (or -0.0), z20/z21 the bounds (or -Inf/+Inf), one row per iteration
.Lepilogue:
	tbz	w9, #ISF_EP_BIT_BIAS, 2f
	ld1w	{z16.s}, p0/z, [x14]
	ld1w	{z17.s}, p0/z, [x14, #1, mul vl]
	ld1w	{z18.s}, p0/z, [x14, #2, mul vl]
	ld1w	{z19.s}, p0/z, [x14, #3, mul vl]
	b	3f
2:	mov	w7, #0x80000000
	mov	z16.s, w7
	mov	z17.s, w7
	mov	z18.s, w7
	mov	z19.s, w7
3:	mov	z20.s, w10
	mov	z21.s, w11
4:	mova	z24.s, p0/m, za0h.s[w12, 0]
	mova	z25.s, p0/m, za1h.s[w12, 0]
	mova	z26.s, p0/m, za2h.s[w12, 0]
	mova	z27.s, p0/m, za3h.s[w12, 0]
	cbz	w5, 5f
	ld1w	{z28.s}, p0/z, [x3]
	ld1w	{z29.s}, p0/z, [x3, #1, mul vl]
	ld1w	{z30.s}, p0/z, [x3, #2, mul vl]
	ld1w	{z31.s}, p0/z, [x3, #3, mul vl]
	fadd	z24.s, z24.s, z28.s
	fadd	z25.s, z25.s, z29.s
	fadd	z26.s, z26.s, z30.s
	fadd	z27.s, z27.s, z31.s
5:	fadd	z24.s, z24.s, z16.s
	fadd	z25.s, z25.s, z17.s
	fadd	z26.s, z26.s, z18.s
	fadd	z27.s, z27.s, z19.s
	fmax	z24.s, p0/m, z24.s, z20.s
	fmax	z25.s, p0/m, z25.s, z20.s
	fmax	z26.s, p0/m, z26.s, z20.s
	fmax	z27.s, p0/m, z27.s, z20.s
	fmin	z24.s, p0/m, z24.s, z21.s
	fmin	z25.s, p0/m, z25.s, z21.s
	fmin	z26.s, p0/m, z26.s, z21.s
	fmin	z27.s, p0/m, z27.s, z21.s
	st1w	{z24.s}, p0, [x3]
	st1w	{z25.s}, p0, [x3, #1, mul vl]
	st1w	{z26.s}, p0, [x3, #2, mul vl]
	st1w	{z27.s}, p0, [x3, #3, mul vl]
	add	x3, x3, x4
	add	w12, w12, #1
	cmp	w12, w16
	b.ne	4b
.Ldone:
	smstop
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	.size	isf_ukernel_gemm_f32_4x16_sme, .-isf_ukernel_gemm_f32_4x16_sme

	.section	.note.GNU-stack,"",%progbits
