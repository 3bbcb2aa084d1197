/* gemm_s8_8x8x4_sme2
 *
 * int8 GEMM micro-kernel with SME2 (no FEAT_SME_FA64): a 2VL x 2VL tile of int32 sums, at SVL s bytes s/2 x s/2
 * (8 x 8 at 128 bits, 128 x 128 at 2048), KR = 4 (hand-written; ABI in kernels/runtime/isf_internal.h: x0
 * k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements, w5 accumulate, x6 epilogue, every step of it).
 *
 * Per k block A is s/2 rows of 4 int8 (two streaming vectors: rows [0, s/4) and [s/4, s/2)), B s/2 columns of 4
 * (two vectors): the 4-way smopa of A vector i and B vector j adds that quarter of the tile to za<2i + j>.s, so
 * the four ZA .s tiles are the tile's quadrants and every byte loaded is used by two smopa of full width. Four
 * k blocks per step, each side's two blocks one 4-vector load (SME2): 4 loads and 16 smopa for 4 x s^2 MACs (24
 * instructions with the loop's), issued a group ahead of their smopa (two register sets). The 1-3 blocks over a
 * multiple of 4 go first, alone; nothing past the panels is read at any SVL.
 *
 * The store takes 4 rows of a quadrant pair at a time out of ZA (two SME2 multi-slice mova) through the epilogue
 * of isf_sme2_int_epilogue.h (int32 with accumulate, or the quantized steps) to C. The call is a normal AAPCS64
 * one: smstart and smstop inside, d8-d15 saved around them, ZA off at return.
 */

#include "isf_epilogue_offsets.h"
#include "kernels/aarch64/sme2/isf_sme2_int_epilogue.h"

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_8x8x4_sme2
	.type	isf_ukernel_gemm_s8_8x8x4_sme2, %function
isf_ukernel_gemm_s8_8x8x4_sme2:
	isf_int_prologue
	smstart
	// smstart from ZA off already zeroes it; explicit, so the sums never depend on how the kernel was entered
	zero	{za}
	ptrue	p0.s
	ptrue	p1.b
	ptrue	pn8.b
	cbz	x0, .Lstore
	tbz	x0, #0, .Lpair
	// k_blocks odd: one block alone
	ld1b	{z0.b-z1.b}, pn8/z, [x1]
	ld1b	{z4.b-z5.b}, pn8/z, [x2]
	isf_int_mopa	0, 1, 4, 5
	addvl	x1, x1, #2
	addvl	x2, x2, #2
	// then a pair alone when 2 or 3 are left over 4s
.Lpair:
	tbz	x0, #1, .Lfours
	ld1b	{z0.b-z3.b}, pn8/z, [x1]
	ld1b	{z4.b-z7.b}, pn8/z, [x2]
	isf_int_mopa	0, 1, 4, 5
	isf_int_mopa	2, 3, 6, 7
	addvl	x1, x1, #4
	addvl	x2, x2, #4
	// x0: groups of 4 blocks, in two register sets (isf_int_mopa_set), each group's loads a group ahead of its
	// smopa
.Lfours:
	lsr	x0, x0, #2
	cbz	x0, .Lstore
	ld1b	{z0.b-z3.b}, pn8/z, [x1]
	ld1b	{z4.b-z7.b}, pn8/z, [x1, #4, mul vl]
	ld1b	{z8.b-z11.b}, pn8/z, [x2]
	ld1b	{z12.b-z15.b}, pn8/z, [x2, #4, mul vl]
	subs	x0, x0, #1
	b.eq	.Llast0
.Lloop:
	ld1b	{z16.b-z19.b}, pn8/z, [x1, #8, mul vl]
	ld1b	{z20.b-z23.b}, pn8/z, [x1, #12, mul vl]
	ld1b	{z24.b-z27.b}, pn8/z, [x2, #8, mul vl]
	ld1b	{z28.b-z31.b}, pn8/z, [x2, #12, mul vl]
	isf_int_mopa_set	0
	addvl	x1, x1, #8
	addvl	x2, x2, #8
	subs	x0, x0, #1
	b.eq	.Llast1
	ld1b	{z0.b-z3.b}, pn8/z, [x1, #8, mul vl]
	ld1b	{z4.b-z7.b}, pn8/z, [x1, #12, mul vl]
	ld1b	{z8.b-z11.b}, pn8/z, [x2, #8, mul vl]
	ld1b	{z12.b-z15.b}, pn8/z, [x2, #12, mul vl]
	isf_int_mopa_set	1
	addvl	x1, x1, #8
	addvl	x2, x2, #8
	subs	x0, x0, #1
	b.ne	.Lloop
	// the last group, in either set: no loads past the panels
.Llast0:
	isf_int_mopa_set	0
	b	.Lstore
.Llast1:
	isf_int_mopa_set	1
	// rows [0, s/4) from za0 (left columns) and za1 (right), then rows [s/4, s/2) from za2 and za3
.Lstore:
	isf_int_setup
	cntw	x8
	mov	w12, #0
.Ltop:
	mova	{z0.s-z3.s}, za0h.s[w12, 0:3]
	mova	{z4.s-z7.s}, za1h.s[w12, 0:3]
	isf_int_rows	4
	isf_int_next_group	.Ltop
	mov	w12, #0
.Lbottom:
	mova	{z0.s-z3.s}, za2h.s[w12, 0:3]
	mova	{z4.s-z7.s}, za3h.s[w12, 0:3]
	isf_int_rows	4
	isf_int_next_group	.Lbottom
	isf_int_return
	.size	isf_ukernel_gemm_s8_8x8x4_sme2, .-isf_ukernel_gemm_s8_8x8x4_sme2

	.section	.note.GNU-stack,"",%progbits
