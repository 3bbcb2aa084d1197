/* gemm_f32_1x8_sme2
 *
 * fp32 GEMM row kernel with SME2 (no FEAT_SME_FA64): one row of C, NR = 2VL floats (VL = SVL/32: 8 at SVL 128
 * bits, 32 at 512), KR = 1, reading gemm_f32_8x8_sme2's B panels (ABI in kernels/runtime/isf_internal.h: x0
 * k_blocks, x1 A panel of one row, x2 B panel, x3 C, x4 ldc, w5 accumulate, x6 epilogue: BIAS and CLAMP). The
 * driver runs it on the last rows of C (m = 1 included), where the full kernel would pad the row to 2VL rows.
 *
 * Per k step the row gains A's value times B's two vectors: one SME2 ZA-array multiply-add, `fmla za.s[w8, o,
 * vgx2], {B}, zA.s[i]`, with the A value indexed from a vector (ld1rqw puts four k steps' A in every 128-bit
 * segment). Per step 1 fmla, half a four-vector load of B, a quarter of A's load and half an instruction of loop
 * control over 8 steps: 2.25 instructions per step, 0.28 per MAC at SVL 128 bits. Streaming SVE's fmla (indexed
 * too) would take two per step, one per vector (26 instructions per 8 steps, 3.25 a step); the full kernel
 * padding the row takes 5.5 a step, 4 of them fmopa, for the one row in 2VL that is useful.
 *
 * Four accumulators, ZA vector groups o = 0-3 (each two ZA vectors: the row's two halves), one per A index, so
 * that consecutive multiply-adds do not wait for each other; they are summed once at the end. The loop does 8
 * steps in two halves of 4 (A in z0 | z1, B in z16-z23 | z24-z31): each half's loads are issued before the
 * other half's fmla, and the last iteration is peeled so that nothing past the panels is read; the k_blocks mod
 * 8 steps left come one at a time, A's load predicated to its one value.
 *
 * The call is a normal AAPCS64 one: smstart and smstop inside, d8-d15 saved around them (they zero every Z and
 * P register), the epilogue's fields read into general registers before smstart; between them only SME, SME2 and
 * streaming SVE (no NEON, no gathers, no FFR). The store: old C added after the sums (accumulate), then, when a
 * step is set, bias and FMAX/FMIN together, with identities for the missing one (bias -0.0, bounds -Inf/+Inf:
 * gemm_f32_8x8_sme2 says why they are exact); the row is already in Z registers, so there is no ZA-direct store.
 */

#include "isf_epilogue_offsets.h"
#include "kernels/aarch64/sme2/isf_sme2_float_store.h" /* from the source root: also from the .inst-encoded copy */

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_f32_1x8_sme2
	.type	isf_ukernel_gemm_f32_1x8_sme2, %function
isf_ukernel_gemm_f32_1x8_sme2:
	// d8-d15 saved, w9 steps, w10/w11 the bounds, x14 the bias; streaming, ZA zeroed, p0 all (x4 unused: one row)
	isf_f32_enter
	ptrue	pn8.s
	mov	w8, #0
	// x16: 8-step iterations; x0: the steps left after them
	lsr	x16, x0, #3
	and	x0, x0, #7
	cbz	x16, .Lrest
	ld1rqw	{z0.s}, p0/z, [x1]
	ld1w	{z16.s-z19.s}, pn8/z, [x2]
	ld1w	{z20.s-z23.s}, pn8/z, [x2, #4, mul vl]
	subs	x16, x16, #1
	b.eq	.Ltail
.Lloop:
	ld1rqw	{z1.s}, p0/z, [x1, #16]
	ld1w	{z24.s-z27.s}, pn8/z, [x2, #8, mul vl]
	ld1w	{z28.s-z31.s}, pn8/z, [x2, #12, mul vl]
	fmla	za.s[w8, 0, vgx2], {z16.s-z17.s}, z0.s[0]
	fmla	za.s[w8, 1, vgx2], {z18.s-z19.s}, z0.s[1]
	fmla	za.s[w8, 2, vgx2], {z20.s-z21.s}, z0.s[2]
	fmla	za.s[w8, 3, vgx2], {z22.s-z23.s}, z0.s[3]
	add	x1, x1, #32
	addvl	x2, x2, #16
	ld1rqw	{z0.s}, p0/z, [x1]
	ld1w	{z16.s-z19.s}, pn8/z, [x2]
	ld1w	{z20.s-z23.s}, pn8/z, [x2, #4, mul vl]
	fmla	za.s[w8, 0, vgx2], {z24.s-z25.s}, z1.s[0]
	fmla	za.s[w8, 1, vgx2], {z26.s-z27.s}, z1.s[1]
	fmla	za.s[w8, 2, vgx2], {z28.s-z29.s}, z1.s[2]
	fmla	za.s[w8, 3, vgx2], {z30.s-z31.s}, z1.s[3]
	subs	x16, x16, #1
	b.ne	.Lloop
	// the last 8 steps: no loads beyond them
.Ltail:
	ld1rqw	{z1.s}, p0/z, [x1, #16]
	ld1w	{z24.s-z27.s}, pn8/z, [x2, #8, mul vl]
	ld1w	{z28.s-z31.s}, pn8/z, [x2, #12, mul vl]
	fmla	za.s[w8, 0, vgx2], {z16.s-z17.s}, z0.s[0]
	fmla	za.s[w8, 1, vgx2], {z18.s-z19.s}, z0.s[1]
	fmla	za.s[w8, 2, vgx2], {z20.s-z21.s}, z0.s[2]
	fmla	za.s[w8, 3, vgx2], {z22.s-z23.s}, z0.s[3]
	fmla	za.s[w8, 0, vgx2], {z24.s-z25.s}, z1.s[0]
	fmla	za.s[w8, 1, vgx2], {z26.s-z27.s}, z1.s[1]
	fmla	za.s[w8, 2, vgx2], {z28.s-z29.s}, z1.s[2]
	fmla	za.s[w8, 3, vgx2], {z30.s-z31.s}, z1.s[3]
	add	x1, x1, #32
	addvl	x2, x2, #16
	// one step at a time; A's load is of the step's value only (p1), so none is read past the panel
.Lrest:
	cbz	x0, .Lstore
	ptrue	p1.s, vl1
1:	ld1rqw	{z0.s}, p1/z, [x1]
	ld1w	{z16.s-z17.s}, pn8/z, [x2]
	fmla	za.s[w8, 0, vgx2], {z16.s-z17.s}, z0.s[0]
	add	x1, x1, #4
	addvl	x2, x2, #2
	subs	x0, x0, #1
	b.ne	1b
	// the row: the four accumulators summed, then old C, bias (z6/z7, or -0.0) and the bounds (z4 lo, z5 hi)
.Lstore:
	mova	{z0.s-z1.s}, za.s[w8, 0, vgx2]
	mova	{z2.s-z3.s}, za.s[w8, 1, vgx2]
	mova	{z16.s-z17.s}, za.s[w8, 2, vgx2]
	mova	{z18.s-z19.s}, za.s[w8, 3, vgx2]
	fadd	z0.s, z0.s, z2.s
	fadd	z1.s, z1.s, z3.s
	fadd	z16.s, z16.s, z18.s
	fadd	z17.s, z17.s, z19.s
	fadd	z0.s, z0.s, z16.s
	fadd	z1.s, z1.s, z17.s
	cbz	w5, 2f
	ld1w	{z2.s-z3.s}, pn8/z, [x3]
	fadd	z0.s, z0.s, z2.s
	fadd	z1.s, z1.s, z3.s
	// no step (every Kc block but a tile's last): nothing more to apply
2:	cbz	w9, 5f
	tbz	w9, #ISF_EP_BIT_BIAS, 3f
	ld1w	{z6.s-z7.s}, pn8/z, [x14]
	b	4f
3:	mov	w15, #0x80000000
	mov	z6.s, w15
	mov	z7.s, w15
4:	mov	z4.s, w10
	mov	z5.s, w11
	fadd	z0.s, z0.s, z6.s
	fadd	z1.s, z1.s, z7.s
	fmax	z0.s, p0/m, z0.s, z4.s
	fmax	z1.s, p0/m, z1.s, z4.s
	fmin	z0.s, p0/m, z0.s, z5.s
	fmin	z1.s, p0/m, z1.s, z5.s
5:	st1w	{z0.s-z1.s}, pn8, [x3]
	isf_f32_leave
	.size	isf_ukernel_gemm_f32_1x8_sme2, .-isf_ukernel_gemm_f32_1x8_sme2

	.section	.note.GNU-stack,"",%progbits
