/* gemm_s8_1x8x4_sme2
 *
 * The row kernel of gemm_s8_8x8x4_sme2: one row of C, NR = SVL/2 int32 columns (8 at 128 bits), KR = 4, on the
 * full kernel's B panels (two streaming vectors per k block). ABI: x0 k_blocks, x1 A (the row's 4 · k_blocks
 * int8), x2 B panel, x3 C, x4 ldc in elements, w5 accumulate, x6 epilogue, every step of it.
 *
 * An outer product would use one of ZA's rows: the row is a dot product instead, SME2's ZA-array sdot by element,
 * one instruction per k block: ZA vectors (left, right) += B's two vectors of the block · A's 4 values of it,
 * broadcast. ld1rqb puts 4 blocks of A in every 128-bit segment, so one A load, two 4-vector B loads and 4 sdot
 * make 4 blocks, 16 blocks an iteration (33 instructions); each of 4 consecutive blocks accumulates into its own
 * pair of ZA vectors (offsets 0-3), so no sdot waits for the one before, and the 4 pairs are added as they leave
 * ZA. A's last 1-3 blocks are loaded under a predicate
 * of their bytes: A may be the caller's row itself, so nothing past it is read.
 */

#include "isf_epilogue_offsets.h"
#include "kernels/aarch64/sme2/isf_sme2_int_epilogue.h"

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s8_1x8x4_sme2
	.type	isf_ukernel_gemm_s8_1x8x4_sme2, %function
isf_ukernel_gemm_s8_1x8x4_sme2:
	isf_int_prologue
	smstart
	zero	{za}
	ptrue	p0.s
	ptrue	p2.b
	ptrue	pn8.b
	mov	w8, #0
	// x10: chunks of 4 blocks, four an iteration: chunk q's A in z<q>, its B in z16-z23 (q even) or z24-z31 (odd)
	isf_int_row_chunks	8, .Lloop, .Lq1, .Lq2, .Lq3, .Ltail
.Lloop:
	ld1rqb	{z0.b}, p2/z, [x1]
	ld1b	{z16.b-z19.b}, pn8/z, [x2]
	ld1b	{z20.b-z23.b}, pn8/z, [x2, #4, mul vl]
	sdot	za.s[w8, 0, vgx2], {z16.b-z17.b}, z0.b[0]
	sdot	za.s[w8, 1, vgx2], {z18.b-z19.b}, z0.b[1]
	sdot	za.s[w8, 2, vgx2], {z20.b-z21.b}, z0.b[2]
	sdot	za.s[w8, 3, vgx2], {z22.b-z23.b}, z0.b[3]
.Lq1:
	ld1rqb	{z1.b}, p2/z, [x1, #16]
	ld1b	{z24.b-z27.b}, pn8/z, [x2, #8, mul vl]
	ld1b	{z28.b-z31.b}, pn8/z, [x2, #12, mul vl]
	sdot	za.s[w8, 0, vgx2], {z24.b-z25.b}, z1.b[0]
	sdot	za.s[w8, 1, vgx2], {z26.b-z27.b}, z1.b[1]
	sdot	za.s[w8, 2, vgx2], {z28.b-z29.b}, z1.b[2]
	sdot	za.s[w8, 3, vgx2], {z30.b-z31.b}, z1.b[3]
.Lq2:
	ld1rqb	{z2.b}, p2/z, [x1, #32]
	ld1b	{z16.b-z19.b}, pn8/z, [x2, #16, mul vl]
	ld1b	{z20.b-z23.b}, pn8/z, [x2, #20, mul vl]
	sdot	za.s[w8, 0, vgx2], {z16.b-z17.b}, z2.b[0]
	sdot	za.s[w8, 1, vgx2], {z18.b-z19.b}, z2.b[1]
	sdot	za.s[w8, 2, vgx2], {z20.b-z21.b}, z2.b[2]
	sdot	za.s[w8, 3, vgx2], {z22.b-z23.b}, z2.b[3]
.Lq3:
	ld1rqb	{z3.b}, p2/z, [x1, #48]
	ld1b	{z24.b-z27.b}, pn8/z, [x2, #24, mul vl]
	ld1b	{z28.b-z31.b}, pn8/z, [x2, #28, mul vl]
	sdot	za.s[w8, 0, vgx2], {z24.b-z25.b}, z3.b[0]
	sdot	za.s[w8, 1, vgx2], {z26.b-z27.b}, z3.b[1]
	sdot	za.s[w8, 2, vgx2], {z28.b-z29.b}, z3.b[2]
	sdot	za.s[w8, 3, vgx2], {z30.b-z31.b}, z3.b[3]
	isf_int_row_next	8, .Lloop
	// the last 0-3 blocks: A's under a predicate of their bytes
.Ltail:
	ands	x0, x0, #3
	b.eq	.Lsums
	lsl	x10, x0, #2
	whilelo	p1.b, xzr, x10
	ld1rqb	{z0.b}, p1/z, [x1]
	ld1b	{z16.b-z17.b}, pn8/z, [x2]
	sdot	za.s[w8, 0, vgx2], {z16.b-z17.b}, z0.b[0]
	cmp	x0, #2
	b.lo	.Lsums
	ld1b	{z18.b-z19.b}, pn8/z, [x2, #2, mul vl]
	sdot	za.s[w8, 1, vgx2], {z18.b-z19.b}, z0.b[1]
	b.eq	.Lsums
	ld1b	{z20.b-z21.b}, pn8/z, [x2, #4, mul vl]
	sdot	za.s[w8, 2, vgx2], {z20.b-z21.b}, z0.b[2]
	// the four pairs' sums: left in z0, right in z4, as the epilogue takes one row
.Lsums:
	mova	{z0.s-z1.s}, za.s[w8, 0, vgx2]
	mova	{z2.s-z3.s}, za.s[w8, 1, vgx2]
	mova	{z4.s-z5.s}, za.s[w8, 2, vgx2]
	mova	{z6.s-z7.s}, za.s[w8, 3, vgx2]
	isf_int_row_sums
	isf_int_setup
	isf_int_rows	1
	isf_int_return
	.size	isf_ukernel_gemm_s8_1x8x4_sme2, .-isf_ukernel_gemm_s8_1x8x4_sme2

	.section	.note.GNU-stack,"",%progbits
