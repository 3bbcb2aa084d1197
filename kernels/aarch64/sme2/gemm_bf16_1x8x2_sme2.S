/* gemm_bf16_1x8x2_sme2
 *
 * The row kernel of gemm_bf16_8x8x2_sme2 (m = 1 and the rows past the last full tile): one row of C, NR = SVL/2 fp32
 * values (8 at 128 bits, 128 at 2048), reading gemm_bf16_8x8x2_sme2's B panels (per k block two streaming vectors,
 * each lane a column's two values) and an A panel of one row (a 32-bit pair per block). KR = 2.
 *
 * SME2's ZA-array bfdot with an indexed multiplier: ld1rqw puts four blocks of A in every 128-bit segment of one
 * register, and `bfdot za.s[w8, o, vgx2], {B's two vectors}, z8.h[i]` adds block i's two products to both vectors of
 * the row in one instruction, so sixteen blocks a pass take 4 loads of A, 8 four-vector loads of B, 16 bfdot and 5
 * instructions of bookkeeping, 2.06 a block (2.25 with eight a pass; an outer product would spend a whole ZA tile
 * on a single row). The row is summed in four vector groups of ZA (offsets 0-3), whose bfdot are independent, and
 * the groups are added at the end: fp32 sums in another order, which isaforge's error bound allows
 * (gemmjob.error_bound: any order). bfdot's products are exact and its sums fp32, rounded to odd or not by FPCR.EBF,
 * as bfmopa's. k_blocks mod 8 goes first, a block at a time (ld1rw of its pair), then eight blocks alone when the
 * eights are odd, so nothing past the panels is read at any SVL.
 */

#include "kernels/aarch64/sme2/isf_sme2_float_store.h" /* from the source root: also from the .inst-encoded copy */

// Eight k blocks from x1 and x2 (not moved on): A's four pairs in z8 and four in z9 (ld1rqw), B's 16
// vectors in z16-z31, one bfdot a block. Here rather than in the include because its instructions are
// SME2, which inst.py rewrites in this file only.
.macro eight_blocks
	ld1rqw	{z8.s}, p0/z, [x1]
	ld1rqw	{z9.s}, p0/z, [x1, #16]
	ld1h	{z16.h-z19.h}, pn8/z, [x2]
	ld1h	{z20.h-z23.h}, pn8/z, [x2, #4, mul vl]
	ld1h	{z24.h-z27.h}, pn8/z, [x2, #8, mul vl]
	ld1h	{z28.h-z31.h}, pn8/z, [x2, #12, mul vl]
	bfdot	za.s[w8, 0, vgx2], {z16.h-z17.h}, z8.h[0]
	bfdot	za.s[w8, 1, vgx2], {z18.h-z19.h}, z8.h[1]
	bfdot	za.s[w8, 2, vgx2], {z20.h-z21.h}, z8.h[2]
	bfdot	za.s[w8, 3, vgx2], {z22.h-z23.h}, z8.h[3]
	bfdot	za.s[w8, 0, vgx2], {z24.h-z25.h}, z9.h[0]
	bfdot	za.s[w8, 1, vgx2], {z26.h-z27.h}, z9.h[1]
	bfdot	za.s[w8, 2, vgx2], {z28.h-z29.h}, z9.h[2]
	bfdot	za.s[w8, 3, vgx2], {z30.h-z31.h}, z9.h[3]
.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_bf16_1x8x2_sme2
	.type	isf_ukernel_gemm_bf16_1x8x2_sme2, %function
isf_ukernel_gemm_bf16_1x8x2_sme2:
	isf_f32_enter
	ptrue	pn8.h
	mov	w8, #0
	and	x13, x0, #7
	lsr	x0, x0, #3
	cbz	x13, .Lgroups
.Lsingle:
	ld1rw	{z8.s}, p0/z, [x1]
	ld1h	{z16.h-z17.h}, pn8/z, [x2]
	bfdot	za.s[w8, 0, vgx2], {z16.h-z17.h}, z8.h
	add	x1, x1, #4
	addvl	x2, x2, #2
	subs	x13, x13, #1
	b.ne	.Lsingle
.Lgroups:
	tbz	x0, #0, .Lsixteens
	eight_blocks
	add	x1, x1, #32
	addvl	x2, x2, #16
.Lsixteens:
	lsr	x0, x0, #1
	cbz	x0, .Lsum
.Lloop:
	eight_blocks
	ld1rqw	{z10.s}, p0/z, [x1, #32]
	ld1rqw	{z11.s}, p0/z, [x1, #48]
	ld1h	{z16.h-z19.h}, pn8/z, [x2, #16, mul vl]
	ld1h	{z20.h-z23.h}, pn8/z, [x2, #20, mul vl]
	ld1h	{z24.h-z27.h}, pn8/z, [x2, #24, mul vl]
	ld1h	{z28.h-z31.h}, pn8/z, [x2, #28, mul vl]
	bfdot	za.s[w8, 0, vgx2], {z16.h-z17.h}, z10.h[0]
	bfdot	za.s[w8, 1, vgx2], {z18.h-z19.h}, z10.h[1]
	bfdot	za.s[w8, 2, vgx2], {z20.h-z21.h}, z10.h[2]
	bfdot	za.s[w8, 3, vgx2], {z22.h-z23.h}, z10.h[3]
	bfdot	za.s[w8, 0, vgx2], {z24.h-z25.h}, z11.h[0]
	bfdot	za.s[w8, 1, vgx2], {z26.h-z27.h}, z11.h[1]
	bfdot	za.s[w8, 2, vgx2], {z28.h-z29.h}, z11.h[2]
	bfdot	za.s[w8, 3, vgx2], {z30.h-z31.h}, z11.h[3]
	add	x1, x1, #64
	addvl	x2, x2, #16
	addvl	x2, x2, #16
	subs	x0, x0, #1
	b.ne	.Lloop
	// the four groups' sums added pairwise: the row's two vectors in z24/z25
.Lsum:
	mova	{z24.s-z25.s}, za.s[w8, 0, vgx2]
	mova	{z26.s-z27.s}, za.s[w8, 1, vgx2]
	mova	{z28.s-z29.s}, za.s[w8, 2, vgx2]
	mova	{z30.s-z31.s}, za.s[w8, 3, vgx2]
	isf_f32_add_groups
	isf_f32_row_out
	isf_f32_leave
	.size	isf_ukernel_gemm_bf16_1x8x2_sme2, .-isf_ukernel_gemm_bf16_1x8x2_sme2

	.section	.note.GNU-stack,"",%progbits
