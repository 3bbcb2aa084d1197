/* gemm_s4_8x8x4_sme2
 *
 * int8 x int4 GEMM micro-kernel with SME2 (no FEAT_SME_FA64): gemm_s8_8x8x4_sme2's 2VL x 2VL tile of int32
 * sums (s/2 x s/2 at SVL s bytes, KR = 4) on int4 B panels (isf_internal.h, "int4 B panels": two k blocks per
 * byte, so k_blocks is always even). ABI: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements, w5
 * accumulate, x6 epilogue, every step of it.
 *
 * Per pair of k blocks: A's two blocks are one 4-vector load, B's pair half of a 4-vector load of nibbles, and
 * (v << 4), (v & 0xF0) are the two blocks' int4 values times 16 as int8, which the 4-way smopa takes as it takes
 * gemm_s8's B (4 instructions where a lookup would need its table and as many). Four blocks per step (31
 * instructions), loaded a group ahead of their smopa. The sums, 16 times the true ones,
 * are shifted back exactly (asr #4) as they leave ZA, before the epilogue of isf_sme2_int_epilogue.h, so what the
 * kernel stores, accumulates and requantizes is gemm_s8's. Nothing past the panels is read at any SVL.
 */

#include "isf_epilogue_offsets.h"
#include "kernels/aarch64/sme2/isf_sme2_int_epilogue.h"

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s4_8x8x4_sme2
	.type	isf_ukernel_gemm_s4_8x8x4_sme2, %function
isf_ukernel_gemm_s4_8x8x4_sme2:
	isf_int_prologue
	smstart
	zero	{za}
	ptrue	p0.s
	ptrue	p1.b
	ptrue	pn8.b
	cbz	x0, .Lstore
	// k_blocks even: a pair alone when 2 are left over 4s (z8, z9 its nibbles, block 2t's B into z12, z13)
	tbz	x0, #1, .Lfours
	ld1b	{z0.b-z3.b}, pn8/z, [x1]
	ld1b	{z8.b-z9.b}, pn8/z, [x2]
	isf_int_nibbles	8, 9, 12, 13
	isf_int_mopa	0, 1, 12, 13
	isf_int_mopa	2, 3, 8, 9
	addvl	x1, x1, #4
	addvl	x2, x2, #2
	// x0: groups of 4 blocks (two pairs) in two register sets (isf_int_s4_set), each group's loads a group ahead
	// of its smopa
.Lfours:
	lsr	x0, x0, #2
	cbz	x0, .Lstore
	ld1b	{z0.b-z3.b}, pn8/z, [x1]
	ld1b	{z4.b-z7.b}, pn8/z, [x1, #4, mul vl]
	ld1b	{z8.b-z11.b}, pn8/z, [x2]
	subs	x0, x0, #1
	b.eq	.Llast0
.Lloop:
	ld1b	{z16.b-z19.b}, pn8/z, [x1, #8, mul vl]
	ld1b	{z20.b-z23.b}, pn8/z, [x1, #12, mul vl]
	ld1b	{z24.b-z27.b}, pn8/z, [x2, #4, mul vl]
	isf_int_s4_set	0
	addvl	x1, x1, #8
	addvl	x2, x2, #4
	subs	x0, x0, #1
	b.eq	.Llast1
	ld1b	{z0.b-z3.b}, pn8/z, [x1, #8, mul vl]
	ld1b	{z4.b-z7.b}, pn8/z, [x1, #12, mul vl]
	ld1b	{z8.b-z11.b}, pn8/z, [x2, #4, mul vl]
	isf_int_s4_set	1
	addvl	x1, x1, #8
	addvl	x2, x2, #4
	subs	x0, x0, #1
	b.ne	.Lloop
	// the last group, in either set: no loads past the panels
.Llast0:
	isf_int_s4_set	0
	b	.Lstore
.Llast1:
	isf_int_s4_set	1
	// as gemm_s8_8x8x4_sme2's store, each group of rows shifted back first
.Lstore:
	isf_int_setup
	cntw	x8
	mov	w12, #0
.Ltop:
	mova	{z0.s-z3.s}, za0h.s[w12, 0:3]
	mova	{z4.s-z7.s}, za1h.s[w12, 0:3]
	isf_int_rows	4, 4
	isf_int_next_group	.Ltop
	mov	w12, #0
.Lbottom:
	mova	{z0.s-z3.s}, za2h.s[w12, 0:3]
	mova	{z4.s-z7.s}, za3h.s[w12, 0:3]
	isf_int_rows	4, 4
	isf_int_next_group	.Lbottom
	isf_int_return
	.size	isf_ukernel_gemm_s4_8x8x4_sme2, .-isf_ukernel_gemm_s4_8x8x4_sme2

	.section	.note.GNU-stack,"",%progbits
