/* gemm_f16_8x8x2_sme2
 *
 * binary16 GEMM micro-kernel with SME2 (no FEAT_SME_FA64) that sums in fp32 and writes fp32: the driver gives it an
 * fp32 C tile, fp32 bias and bounds, sums its Kc blocks there and rounds to binary16 once (a widened kernel's path,
 * kernels/runtime/driver.c through_acc). The tile is 2VL x 2VL fp32 values, SVL/2 x SVL/2 at SVL bytes (8 x 8 at
 * 128 bits), KR = 2: per k block (two steps of k) A is two streaming vectors (rows [0, VLs) and [VLs, 2VLs),
 * VLs = SVL/4, each lane a row's two values) and B two (columns likewise), and the widening fmopa's 2-way outer
 * products of them fill ZA's four .s tiles: za0 | za1 over za2 | za3 (kernels/aarch64/sme2/isf_sme2_float_store.h
 * has the shared entry, exit and store; ABI in kernels/runtime/isf_internal.h). The loop and store are
 * gemm_bf16_8x8x2_sme2's with fmopa for bfmopa.
 *
 * The loop takes eight k blocks a pass: SME2's four-vector loads bring two blocks of A (or of B) in one
 * instruction, so a pass is 8 loads, 32 fmopa and 4 instructions of bookkeeping (5.5 a block; 6 with four blocks a
 * pass). Four register sets, each pair of blocks loaded a pair ahead of its fmopa; k_blocks' low bits go first (one
 * block, one pair, two pairs) and the last pass is peeled, so nothing past the panels is read at any SVL.
 */

#include "kernels/aarch64/sme2/isf_sme2_float_store.h" /* from the source root: also from the .inst-encoded copy */

// The first three pairs of an eight-block pass (z0-z7 loaded before it), each pair's loads a pair ahead of
// its fmopa: the loop's and the peeled last pass's. Here rather than in the include because its loads are
// SME2, which inst.py rewrites in this file only.
.macro pass_head
	ld1h	{z8.h-z11.h}, pn8/z, [x1, #4, mul vl]
	ld1h	{z12.h-z15.h}, pn8/z, [x2, #4, mul vl]
	isf_mopa_2x2 fmopa, 0, 1, 4, 5
	isf_mopa_2x2 fmopa, 2, 3, 6, 7
	ld1h	{z16.h-z19.h}, pn8/z, [x1, #8, mul vl]
	ld1h	{z20.h-z23.h}, pn8/z, [x2, #8, mul vl]
	isf_mopa_2x2 fmopa, 8, 9, 12, 13
	isf_mopa_2x2 fmopa, 10, 11, 14, 15
	ld1h	{z24.h-z27.h}, pn8/z, [x1, #12, mul vl]
	ld1h	{z28.h-z31.h}, pn8/z, [x2, #12, mul vl]
	isf_mopa_2x2 fmopa, 16, 17, 20, 21
	isf_mopa_2x2 fmopa, 18, 19, 22, 23
.endm

// The tile's rows, four of each half a pass, through \rows4 (a macro of isf_sme2_float_store.h taking the row
// pointer) from z24-z27 (za0, za2: the first vector of each row) and z28-z31 (za1, za3: the second).
.macro tile_rows rows4
	isf_f32_tile_rows
.Lrows\@:
	mova	{z24.s-z27.s}, za0h.s[w12, 0:3]
	mova	{z28.s-z31.s}, za1h.s[w12, 0:3]
	\rows4 x3
	mova	{z24.s-z27.s}, za2h.s[w12, 0:3]
	mova	{z28.s-z31.s}, za3h.s[w12, 0:3]
	\rows4 x15
	add	w12, w12, #4
	cmp	w12, w7
	b.ne	.Lrows\@
.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_f16_8x8x2_sme2
	.type	isf_ukernel_gemm_f16_8x8x2_sme2, %function
isf_ukernel_gemm_f16_8x8x2_sme2:
	isf_f32_enter
	// p1: fmopa's .h lanes; pn8: the multi-vector loads'
	ptrue	p1.h
	ptrue	pn8.h
	cbz	x0, .Lstore
	tbz	x0, #0, .Lpair
	ld1h	{z0.h-z1.h}, pn8/z, [x1]
	ld1h	{z4.h-z5.h}, pn8/z, [x2]
	isf_mopa_2x2 fmopa, 0, 1, 4, 5
	addvl	x1, x1, #2
	addvl	x2, x2, #2
	subs	x0, x0, #1
	b.eq	.Lstore
.Lpair:
	tbz	x0, #1, .Lquad
	ld1h	{z0.h-z3.h}, pn8/z, [x1]
	ld1h	{z4.h-z7.h}, pn8/z, [x2]
	isf_mopa_2x2 fmopa, 0, 1, 4, 5
	isf_mopa_2x2 fmopa, 2, 3, 6, 7
	addvl	x1, x1, #4
	addvl	x2, x2, #4
	subs	x0, x0, #2
	b.eq	.Lstore
.Lquad:
	tbz	x0, #2, .Leights
	ld1h	{z0.h-z3.h}, pn8/z, [x1]
	ld1h	{z4.h-z7.h}, pn8/z, [x2]
	ld1h	{z8.h-z11.h}, pn8/z, [x1, #4, mul vl]
	ld1h	{z12.h-z15.h}, pn8/z, [x2, #4, mul vl]
	isf_mopa_2x2 fmopa, 0, 1, 4, 5
	isf_mopa_2x2 fmopa, 2, 3, 6, 7
	isf_mopa_2x2 fmopa, 8, 9, 12, 13
	isf_mopa_2x2 fmopa, 10, 11, 14, 15
	addvl	x1, x1, #8
	addvl	x2, x2, #8
	subs	x0, x0, #4
	b.eq	.Lstore
	// a multiple of eight blocks left, four pairs of them in four register sets (z0-z7, z8-z15, z16-z23,
	// z24-z31), each pair loaded a pair ahead of its fmopa
.Leights:
	ld1h	{z0.h-z3.h}, pn8/z, [x1]
	ld1h	{z4.h-z7.h}, pn8/z, [x2]
	subs	x0, x0, #8
	b.eq	.Ltail
.Lloop:
	pass_head
	addvl	x1, x1, #16
	addvl	x2, x2, #16
	ld1h	{z0.h-z3.h}, pn8/z, [x1]
	ld1h	{z4.h-z7.h}, pn8/z, [x2]
	isf_mopa_2x2 fmopa, 24, 25, 28, 29
	isf_mopa_2x2 fmopa, 26, 27, 30, 31
	subs	x0, x0, #8
	b.ne	.Lloop
	// the last eight blocks: no loads beyond them
.Ltail:
	pass_head
	isf_mopa_2x2 fmopa, 24, 25, 28, 29
	isf_mopa_2x2 fmopa, 26, 27, 30, 31
	// straight from ZA's slices when there is nothing to add or clamp; else four rows of each half at a time
	// moved out with SME2's slice-group mova, old C added (accumulate alone: no identities applied) or the whole
	// epilogue
.Lstore:
	cbnz	w9, .Lepilogue
	cbnz	w5, .Laccumulate
	isf_f32_store_za_2x2
	b	.Ldone
.Laccumulate:
	tile_rows isf_f32_rows4_add_old
	b	.Ldone
.Lepilogue:
	isf_f32_ep_consts
	tile_rows isf_f32_rows4
.Ldone:
	isf_f32_leave
	.size	isf_ukernel_gemm_f16_8x8x2_sme2, .-isf_ukernel_gemm_f16_8x8x2_sme2

	.section	.note.GNU-stack,"",%progbits
