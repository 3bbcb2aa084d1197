/* gemm_s4_8x8x4_sme2
 *
 * int8 x int4 GEMM micro-kernel with SME2 (no FEAT_SME_FA64): gemm_s8_8x8x4_sme2's 2VL x 2VL tile of int32
 * sums (s/2 x s/2 at SVL s bytes, KR = 4) on int4 B panels (isf_internal.h, "int4 B panels": two k blocks per
 * byte, so k_blocks is always even). ABI: x0 k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements, w5
 * accumulate, x6 epilogue, every step of it.
 *
 * Per pair of k blocks: A's two blocks are one 4-vector load, B's pair one 2-vector load of nibbles, and
 * (v << 4), (v & 0xF0) are the two blocks' int4 values times 16 as int8, which the 4-way smopa takes as it takes
 * gemm_s8's B (4 instructions where a lookup would need its table and as many). The sums, 16 times the true ones,
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
	// pairs of blocks in two register sets, each pair's loads a pair ahead of its smopa: z0-z3 A of blocks 2t
	// (z0, z1) and 2t + 1 (z2, z3), z8, z9 the pair's nibbles (left and right columns); z16-z19, z10, z11 the
	// next pair's. Unpacked: block 2t's B (low nibbles) into z4, z5 (z20, z21), block 2t + 1's (high) in place
	ld1b	{z0.b-z3.b}, pn8/z, [x1]
	ld1b	{z8.b-z9.b}, pn8/z, [x2]
	subs	x0, x0, #2
	b.eq	.Llast0
.Lloop:
	ld1b	{z16.b-z19.b}, pn8/z, [x1, #4, mul vl]
	ld1b	{z10.b-z11.b}, pn8/z, [x2, #2, mul vl]
	isf_int_nibbles	8, 9, 4, 5
	isf_int_mopa	0, 1, 4, 5
	isf_int_mopa	2, 3, 8, 9
	addvl	x1, x1, #4
	addvl	x2, x2, #2
	subs	x0, x0, #2
	b.eq	.Llast1
	ld1b	{z0.b-z3.b}, pn8/z, [x1, #4, mul vl]
	ld1b	{z8.b-z9.b}, pn8/z, [x2, #2, mul vl]
	isf_int_nibbles	10, 11, 20, 21
	isf_int_mopa	16, 17, 20, 21
	isf_int_mopa	18, 19, 10, 11
	addvl	x1, x1, #4
	addvl	x2, x2, #2
	subs	x0, x0, #2
	b.ne	.Lloop
	// the last pair, in either set: no loads past the panels
.Llast0:
	isf_int_nibbles	8, 9, 4, 5
	isf_int_mopa	0, 1, 4, 5
	isf_int_mopa	2, 3, 8, 9
	b	.Lstore
.Llast1:
	isf_int_nibbles	10, 11, 20, 21
	isf_int_mopa	16, 17, 20, 21
	isf_int_mopa	18, 19, 10, 11
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
