/* gemm_s4_1x8x4_sme2
 *
 * The row kernel of gemm_s4_8x8x4_sme2: gemm_s8_1x8x4_sme2's row (NR = SVL/2 int32 columns, KR = 4, ZA-array
 * sdot by element, one per k block) on the full kernel's int4 B panels (isf_internal.h: two k blocks per byte,
 * k_blocks always even). ABI: x0 k_blocks, x1 A (the row's 4 · k_blocks int8), x2 B panel, x3 C, x4 ldc in
 * elements, w5 accumulate, x6 epilogue, every step of it.
 *
 * Per 4 blocks: one ld1rqb of A, one 4-vector load of B's two pairs, (v << 4) and (v & 0xF0) the blocks' values
 * times 16, 4 sdot into 4 pairs of ZA vectors; 16 blocks an iteration. A last pair of blocks is loaded under a predicate of A's 8 bytes, so
 * nothing past A (which may be the caller's row) is read. The sums, 16 times the true ones, are shifted back (asr
 * #4, exact) as they leave ZA, before the epilogue.
 */

#include "isf_epilogue_offsets.h"
#include "kernels/aarch64/sme2/isf_sme2_int_epilogue.h"

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s4_1x8x4_sme2
	.type	isf_ukernel_gemm_s4_1x8x4_sme2, %function
isf_ukernel_gemm_s4_1x8x4_sme2:
	isf_int_prologue
	smstart
	zero	{za}
	ptrue	p0.s
	ptrue	p2.b
	ptrue	pn8.b
	mov	w8, #0
	// x10: chunks of 4 blocks (2 pairs), four an iteration: chunk q's A in z<q>, its nibbles in z16-z19 (q even)
	// or z24-z27 (odd), pairs 0 and 1, left and right columns; blocks 0 and 2 of a chunk (low nibbles) into
	// z20-z23 (z28-z31), blocks 1 and 3 (high nibbles) in place
	isf_int_row_chunks	4, .Lloop, .Lq1, .Lq2, .Lq3, .Ltail
.Lloop:
	ld1rqb	{z0.b}, p2/z, [x1]
	ld1b	{z16.b-z19.b}, pn8/z, [x2]
	isf_int_nibbles	16, 17, 20, 21
	isf_int_nibbles	18, 19, 22, 23
	sdot	za.s[w8, 0, vgx2], {z20.b-z21.b}, z0.b[0]
	sdot	za.s[w8, 1, vgx2], {z16.b-z17.b}, z0.b[1]
	sdot	za.s[w8, 2, vgx2], {z22.b-z23.b}, z0.b[2]
	sdot	za.s[w8, 3, vgx2], {z18.b-z19.b}, z0.b[3]
.Lq1:
	ld1rqb	{z1.b}, p2/z, [x1, #16]
	ld1b	{z24.b-z27.b}, pn8/z, [x2, #4, mul vl]
	isf_int_nibbles	24, 25, 28, 29
	isf_int_nibbles	26, 27, 30, 31
	sdot	za.s[w8, 0, vgx2], {z28.b-z29.b}, z1.b[0]
	sdot	za.s[w8, 1, vgx2], {z24.b-z25.b}, z1.b[1]
	sdot	za.s[w8, 2, vgx2], {z30.b-z31.b}, z1.b[2]
	sdot	za.s[w8, 3, vgx2], {z26.b-z27.b}, z1.b[3]
.Lq2:
	ld1rqb	{z2.b}, p2/z, [x1, #32]
	ld1b	{z16.b-z19.b}, pn8/z, [x2, #8, mul vl]
	isf_int_nibbles	16, 17, 20, 21
	isf_int_nibbles	18, 19, 22, 23
	sdot	za.s[w8, 0, vgx2], {z20.b-z21.b}, z2.b[0]
	sdot	za.s[w8, 1, vgx2], {z16.b-z17.b}, z2.b[1]
	sdot	za.s[w8, 2, vgx2], {z22.b-z23.b}, z2.b[2]
	sdot	za.s[w8, 3, vgx2], {z18.b-z19.b}, z2.b[3]
.Lq3:
	ld1rqb	{z3.b}, p2/z, [x1, #48]
	ld1b	{z24.b-z27.b}, pn8/z, [x2, #12, mul vl]
	isf_int_nibbles	24, 25, 28, 29
	isf_int_nibbles	26, 27, 30, 31
	sdot	za.s[w8, 0, vgx2], {z28.b-z29.b}, z3.b[0]
	sdot	za.s[w8, 1, vgx2], {z24.b-z25.b}, z3.b[1]
	sdot	za.s[w8, 2, vgx2], {z30.b-z31.b}, z3.b[2]
	sdot	za.s[w8, 3, vgx2], {z26.b-z27.b}, z3.b[3]
	isf_int_row_next	4, .Lloop
	// 0 or 2 blocks left: A's 8 bytes under a predicate
.Ltail:
	tbz	x0, #1, .Lsums
	ptrue	p1.b, vl8
	ld1rqb	{z0.b}, p1/z, [x1]
	ld1b	{z16.b-z17.b}, pn8/z, [x2]
	isf_int_nibbles	16, 17, 20, 21
	sdot	za.s[w8, 0, vgx2], {z20.b-z21.b}, z0.b[0]
	sdot	za.s[w8, 1, vgx2], {z16.b-z17.b}, z0.b[1]
	// the four pairs' sums: left in z0, right in z4, as the epilogue takes one row
.Lsums:
	mova	{z0.s-z1.s}, za.s[w8, 0, vgx2]
	mova	{z2.s-z3.s}, za.s[w8, 1, vgx2]
	mova	{z4.s-z5.s}, za.s[w8, 2, vgx2]
	mova	{z6.s-z7.s}, za.s[w8, 3, vgx2]
	isf_int_row_sums
	isf_int_setup
	isf_int_rows	1, 4
	isf_int_return
	.size	isf_ukernel_gemm_s4_1x8x4_sme2, .-isf_ukernel_gemm_s4_1x8x4_sme2

	.section	.note.GNU-stack,"",%progbits
