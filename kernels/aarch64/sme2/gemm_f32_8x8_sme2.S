/* gemm_f32_8x8_sme2
 *
 * fp32 GEMM micro-kernel with SME2 (no FEAT_SME_FA64): a 2VL x 2VL tile, VL = SVL/32 floats (8 x 8 at SVL 128
 * bits, 32 x 32 at 512), KR = 1, fmopa into the four ZA .s tiles (ABI in kernels/runtime/isf_internal.h: x0
 * k_blocks, x1 A panel, x2 B panel, x3 C, x4 ldc in elements, w5 accumulate, x6 epilogue: BIAS and CLAMP).
 *
 * Per k step A is two vectors (rows [0, VL), [VL, 2VL)) and B two (columns [0, VL), [VL, 2VL)): za0 = rows 0 x
 * columns 0, za1 = rows 0 x columns 1, za2 = rows 1 x columns 0, za3 = rows 1 x columns 1, so each element
 * loaded feeds two full-width fmopa and all of ZA's rows are useful at every SVL. The panels are contiguous, so
 * one SME2 four-vector load brings A (or B) for two k steps: per step 4 fmopa and 1 load, the least a 2VL x 2VL
 * tile can execute, with 4 instructions of loop control per 8 steps (0.086 instructions per MAC at SVL 128 bits,
 * 0.021 at 256, 0.0054 at 512).
 *
 * The main loop does 8 steps per iteration in four register sets of two steps (z0-z7, z8-z15, z16-z23,
 * z24-z31): each set is reloaded for the next iteration right after its fmopa have read it, so every load is
 * issued three sets (24 fmopa) ahead of its use, and the last iteration is peeled so that nothing past the
 * panels is read. k_blocks mod 8 is done first (one step when odd, then pairs), unpipelined: at most 7 steps of
 * a Kc block.
 *
 * The call is a normal AAPCS64 one: entered non-streaming with ZA off, the kernel runs smstart itself and smstop
 * before it returns (ZA off again, TPIDR2_EL0 untouched). smstart and smstop zero every Z and P register, so
 * d8-d15 are saved on the stack around them; the epilogue's fields are read into general registers before
 * smstart. Between them only SME, SME2 and streaming SVE (no NEON, no gathers, no FFR: FA64 is off, as on Apple
 * M4).
 *
 * The store: ZA's rows go straight to C (st1w of a ZA slice) when there is neither accumulate nor an epilogue step.
 * Otherwise four rows of each tile at a time are moved out with SME2's four-slice mova. Accumulate alone (every Kc
 * block after a tile's first: the driver's Kc shrinks as the tile grows, 64 k at SVL 512 bits, so this store is as
 * frequent as the loop's 8-step iterations are few) is its own loop, old C added after the sums with SME2 loads and
 * stores of a row's two halves at once: under 3 instructions per vector of C where the general one takes 7.5. With
 * a step, old C (accumulate) is added after the sums, then bias, then FMAX/FMIN (IEEE maximum/minimum: a NaN stays
 * NaN, -0 < +0). A missing step is applied as its identity rather than branched around: bias -0.0 (x + -0 = x for
 * every x, -0 included, rounding to nearest) and bounds -Inf/+Inf (fmax(x, -Inf) = fmin(x, +Inf) = x, NaN
 * included). SME2's fclamp is not used: it is FMAXNM/FMINNM, which would turn a NaN into a bound.
 */

#include "isf_epilogue_offsets.h"
#include "kernels/aarch64/sme2/isf_sme2_float_store.h" /* from the source root: also from the .inst-encoded copy */

/* One half row (VL floats, z\v) of the epilogue path at [\c, #\h, mul vl]: old C (w5), bias z\b, bounds z26 and
 * z27. SVE only, so that the gcc route's .inst encoder has nothing to rewrite in a macro. */
.macro	epi_half v, b, c, h
	cbz	w5, 1f
	ld1w	{z28.s}, p0/z, [\c, #\h, mul vl]
	fadd	z\v\().s, z\v\().s, z28.s
1:	fadd	z\v\().s, z\v\().s, z\b\().s
	fmax	z\v\().s, p0/m, z\v\().s, z26.s
	fmin	z\v\().s, p0/m, z\v\().s, z27.s
	st1w	{z\v\().s}, p0, [\c, #\h, mul vl]
.endm

/* One row of the four moved out, halves z\tl | z\tr at x3 (top half of the tile) and z\bl | z\br at x13. */
.macro	epi_row tl, tr, bl, br
	epi_half \tl, 24, x3, 0
	epi_half \tr, 25, x3, 1
	epi_half \bl, 24, x13, 0
	epi_half \br, 25, x13, 1
	add	x3, x3, x4
	add	x13, x13, x4
.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_f32_8x8_sme2
	.type	isf_ukernel_gemm_f32_8x8_sme2, %function
isf_ukernel_gemm_f32_8x8_sme2:
	// d8-d15 saved, x4 ldc in bytes, w9 steps, w10/w11 the bounds, x14 the bias; streaming, ZA zeroed, p0 all
	isf_f32_enter
	ptrue	pn8.s
	// x16: the steps before the pipelined loop (k_blocks mod 8); x0: its iterations
	and	x16, x0, #7
	lsr	x0, x0, #3
	tbz	x16, #0, 1f
	ld1w	{z0.s-z1.s}, pn8/z, [x1]
	ld1w	{z4.s-z5.s}, pn8/z, [x2]
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z1.s, z4.s
	fmopa	za3.s, p0/m, p0/m, z1.s, z5.s
	addvl	x1, x1, #2
	addvl	x2, x2, #2
1:	lsr	x16, x16, #1
	cbz	x16, 3f
2:	ld1w	{z0.s-z3.s}, pn8/z, [x1]
	ld1w	{z4.s-z7.s}, pn8/z, [x2]
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z1.s, z4.s
	fmopa	za3.s, p0/m, p0/m, z1.s, z5.s
	fmopa	za0.s, p0/m, p0/m, z2.s, z6.s
	fmopa	za1.s, p0/m, p0/m, z2.s, z7.s
	fmopa	za2.s, p0/m, p0/m, z3.s, z6.s
	fmopa	za3.s, p0/m, p0/m, z3.s, z7.s
	addvl	x1, x1, #4
	addvl	x2, x2, #4
	subs	x16, x16, #1
	b.ne	2b
3:	cbz	x0, .Lstore
	ld1w	{z0.s-z3.s}, pn8/z, [x1]
	ld1w	{z4.s-z7.s}, pn8/z, [x2]
	ld1w	{z8.s-z11.s}, pn8/z, [x1, #4, mul vl]
	ld1w	{z12.s-z15.s}, pn8/z, [x2, #4, mul vl]
	ld1w	{z16.s-z19.s}, pn8/z, [x1, #8, mul vl]
	ld1w	{z20.s-z23.s}, pn8/z, [x2, #8, mul vl]
	ld1w	{z24.s-z27.s}, pn8/z, [x1, #12, mul vl]
	ld1w	{z28.s-z31.s}, pn8/z, [x2, #12, mul vl]
	subs	x0, x0, #1
	b.eq	.Ltail
.Lloop:
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z1.s, z4.s
	fmopa	za3.s, p0/m, p0/m, z1.s, z5.s
	fmopa	za0.s, p0/m, p0/m, z2.s, z6.s
	fmopa	za1.s, p0/m, p0/m, z2.s, z7.s
	fmopa	za2.s, p0/m, p0/m, z3.s, z6.s
	fmopa	za3.s, p0/m, p0/m, z3.s, z7.s
	ld1w	{z0.s-z3.s}, pn8/z, [x1, #16, mul vl]
	ld1w	{z4.s-z7.s}, pn8/z, [x2, #16, mul vl]
	fmopa	za0.s, p0/m, p0/m, z8.s, z12.s
	fmopa	za1.s, p0/m, p0/m, z8.s, z13.s
	fmopa	za2.s, p0/m, p0/m, z9.s, z12.s
	fmopa	za3.s, p0/m, p0/m, z9.s, z13.s
	fmopa	za0.s, p0/m, p0/m, z10.s, z14.s
	fmopa	za1.s, p0/m, p0/m, z10.s, z15.s
	fmopa	za2.s, p0/m, p0/m, z11.s, z14.s
	fmopa	za3.s, p0/m, p0/m, z11.s, z15.s
	ld1w	{z8.s-z11.s}, pn8/z, [x1, #20, mul vl]
	ld1w	{z12.s-z15.s}, pn8/z, [x2, #20, mul vl]
	fmopa	za0.s, p0/m, p0/m, z16.s, z20.s
	fmopa	za1.s, p0/m, p0/m, z16.s, z21.s
	fmopa	za2.s, p0/m, p0/m, z17.s, z20.s
	fmopa	za3.s, p0/m, p0/m, z17.s, z21.s
	fmopa	za0.s, p0/m, p0/m, z18.s, z22.s
	fmopa	za1.s, p0/m, p0/m, z18.s, z23.s
	fmopa	za2.s, p0/m, p0/m, z19.s, z22.s
	fmopa	za3.s, p0/m, p0/m, z19.s, z23.s
	ld1w	{z16.s-z19.s}, pn8/z, [x1, #24, mul vl]
	ld1w	{z20.s-z23.s}, pn8/z, [x2, #24, mul vl]
	fmopa	za0.s, p0/m, p0/m, z24.s, z28.s
	fmopa	za1.s, p0/m, p0/m, z24.s, z29.s
	fmopa	za2.s, p0/m, p0/m, z25.s, z28.s
	fmopa	za3.s, p0/m, p0/m, z25.s, z29.s
	fmopa	za0.s, p0/m, p0/m, z26.s, z30.s
	fmopa	za1.s, p0/m, p0/m, z26.s, z31.s
	fmopa	za2.s, p0/m, p0/m, z27.s, z30.s
	fmopa	za3.s, p0/m, p0/m, z27.s, z31.s
	ld1w	{z24.s-z27.s}, pn8/z, [x1, #28, mul vl]
	ld1w	{z28.s-z31.s}, pn8/z, [x2, #28, mul vl]
	addvl	x1, x1, #16
	addvl	x2, x2, #16
	subs	x0, x0, #1
	b.ne	.Lloop
	// the last 8 steps: no loads beyond them, so nothing past the panels is read
.Ltail:
	fmopa	za0.s, p0/m, p0/m, z0.s, z4.s
	fmopa	za1.s, p0/m, p0/m, z0.s, z5.s
	fmopa	za2.s, p0/m, p0/m, z1.s, z4.s
	fmopa	za3.s, p0/m, p0/m, z1.s, z5.s
	fmopa	za0.s, p0/m, p0/m, z2.s, z6.s
	fmopa	za1.s, p0/m, p0/m, z2.s, z7.s
	fmopa	za2.s, p0/m, p0/m, z3.s, z6.s
	fmopa	za3.s, p0/m, p0/m, z3.s, z7.s
	fmopa	za0.s, p0/m, p0/m, z8.s, z12.s
	fmopa	za1.s, p0/m, p0/m, z8.s, z13.s
	fmopa	za2.s, p0/m, p0/m, z9.s, z12.s
	fmopa	za3.s, p0/m, p0/m, z9.s, z13.s
	fmopa	za0.s, p0/m, p0/m, z10.s, z14.s
	fmopa	za1.s, p0/m, p0/m, z10.s, z15.s
	fmopa	za2.s, p0/m, p0/m, z11.s, z14.s
	fmopa	za3.s, p0/m, p0/m, z11.s, z15.s
	fmopa	za0.s, p0/m, p0/m, z16.s, z20.s
	fmopa	za1.s, p0/m, p0/m, z16.s, z21.s
	fmopa	za2.s, p0/m, p0/m, z17.s, z20.s
	fmopa	za3.s, p0/m, p0/m, z17.s, z21.s
	fmopa	za0.s, p0/m, p0/m, z18.s, z22.s
	fmopa	za1.s, p0/m, p0/m, z18.s, z23.s
	fmopa	za2.s, p0/m, p0/m, z19.s, z22.s
	fmopa	za3.s, p0/m, p0/m, z19.s, z23.s
	fmopa	za0.s, p0/m, p0/m, z24.s, z28.s
	fmopa	za1.s, p0/m, p0/m, z24.s, z29.s
	fmopa	za2.s, p0/m, p0/m, z25.s, z28.s
	fmopa	za3.s, p0/m, p0/m, z25.s, z29.s
	fmopa	za0.s, p0/m, p0/m, z26.s, z30.s
	fmopa	za1.s, p0/m, p0/m, z26.s, z31.s
	fmopa	za2.s, p0/m, p0/m, z27.s, z30.s
	fmopa	za3.s, p0/m, p0/m, z27.s, z31.s
	// the tile, row stride ldc: x3 row i of the top half (za0 | za1), x13 row i of the bottom (za2 | za3); x7 = VL
.Lstore:
	mov	w12, #0
	cntw	x7
	mul	x13, x7, x4
	add	x13, x3, x13
	cbnz	w9, .Lepilogue
	cbnz	w5, .Laccumulate
1:	st1w	{za0h.s[w12, 0]}, p0, [x3]
	st1w	{za1h.s[w12, 0]}, p0, [x3, x7, lsl #2]
	st1w	{za2h.s[w12, 0]}, p0, [x13]
	st1w	{za3h.s[w12, 0]}, p0, [x13, x7, lsl #2]
	add	x3, x3, x4
	add	x13, x13, x4
	st1w	{za0h.s[w12, 1]}, p0, [x3]
	st1w	{za1h.s[w12, 1]}, p0, [x3, x7, lsl #2]
	st1w	{za2h.s[w12, 1]}, p0, [x13]
	st1w	{za3h.s[w12, 1]}, p0, [x13, x7, lsl #2]
	add	x3, x3, x4
	add	x13, x13, x4
	st1w	{za0h.s[w12, 2]}, p0, [x3]
	st1w	{za1h.s[w12, 2]}, p0, [x3, x7, lsl #2]
	st1w	{za2h.s[w12, 2]}, p0, [x13]
	st1w	{za3h.s[w12, 2]}, p0, [x13, x7, lsl #2]
	add	x3, x3, x4
	add	x13, x13, x4
	st1w	{za0h.s[w12, 3]}, p0, [x3]
	st1w	{za1h.s[w12, 3]}, p0, [x3, x7, lsl #2]
	st1w	{za2h.s[w12, 3]}, p0, [x13]
	st1w	{za3h.s[w12, 3]}, p0, [x13, x7, lsl #2]
	add	x3, x3, x4
	add	x13, x13, x4
	add	w12, w12, #4
	cmp	w12, w7
	b.ne	1b
	b	.Ldone
	// accumulate alone (the earlier Kc blocks' sums in C, no step): a row's two halves are a strided register pair
	// ({z0, z8}: one SME2 load or store each), four rows of each tile moved out at a time
.Laccumulate:
5:	mova	{z0.s-z3.s}, za0h.s[w12, 0:3]
	mova	{z8.s-z11.s}, za1h.s[w12, 0:3]
	mova	{z16.s-z19.s}, za2h.s[w12, 0:3]
	mova	{z24.s-z27.s}, za3h.s[w12, 0:3]
	ld1w	{z4.s, z12.s}, pn8/z, [x3]
	ld1w	{z20.s, z28.s}, pn8/z, [x13]
	fadd	z0.s, z0.s, z4.s
	fadd	z8.s, z8.s, z12.s
	fadd	z16.s, z16.s, z20.s
	fadd	z24.s, z24.s, z28.s
	st1w	{z0.s, z8.s}, pn8, [x3]
	st1w	{z16.s, z24.s}, pn8, [x13]
	add	x3, x3, x4
	add	x13, x13, x4
	ld1w	{z4.s, z12.s}, pn8/z, [x3]
	ld1w	{z20.s, z28.s}, pn8/z, [x13]
	fadd	z1.s, z1.s, z4.s
	fadd	z9.s, z9.s, z12.s
	fadd	z17.s, z17.s, z20.s
	fadd	z25.s, z25.s, z28.s
	st1w	{z1.s, z9.s}, pn8, [x3]
	st1w	{z17.s, z25.s}, pn8, [x13]
	add	x3, x3, x4
	add	x13, x13, x4
	ld1w	{z4.s, z12.s}, pn8/z, [x3]
	ld1w	{z20.s, z28.s}, pn8/z, [x13]
	fadd	z2.s, z2.s, z4.s
	fadd	z10.s, z10.s, z12.s
	fadd	z18.s, z18.s, z20.s
	fadd	z26.s, z26.s, z28.s
	st1w	{z2.s, z10.s}, pn8, [x3]
	st1w	{z18.s, z26.s}, pn8, [x13]
	add	x3, x3, x4
	add	x13, x13, x4
	ld1w	{z4.s, z12.s}, pn8/z, [x3]
	ld1w	{z20.s, z28.s}, pn8/z, [x13]
	fadd	z3.s, z3.s, z4.s
	fadd	z11.s, z11.s, z12.s
	fadd	z19.s, z19.s, z20.s
	fadd	z27.s, z27.s, z28.s
	st1w	{z3.s, z11.s}, pn8, [x3]
	st1w	{z19.s, z27.s}, pn8, [x13]
	add	x3, x3, x4
	add	x13, x13, x4
	add	w12, w12, #4
	cmp	w12, w7
	b.ne	5b
	b	.Ldone
	// steps (and accumulate or not): z24/z25 bias (or -0.0), z26/z27 the bounds (or -Inf/+Inf), four rows per
	// iteration
.Lepilogue:
	tbz	w9, #ISF_EP_BIT_BIAS, 2f
	ld1w	{z24.s-z25.s}, pn8/z, [x14]
	b	3f
2:	mov	w15, #0x80000000
	mov	z24.s, w15
	mov	z25.s, w15
3:	mov	z26.s, w10
	mov	z27.s, w11
4:	mova	{z0.s-z3.s}, za0h.s[w12, 0:3]
	mova	{z8.s-z11.s}, za1h.s[w12, 0:3]
	mova	{z16.s-z19.s}, za2h.s[w12, 0:3]
	mova	{z20.s-z23.s}, za3h.s[w12, 0:3]
	epi_row	0, 8, 16, 20
	epi_row	1, 9, 17, 21
	epi_row	2, 10, 18, 22
	epi_row	3, 11, 19, 23
	add	w12, w12, #4
	cmp	w12, w7
	b.ne	4b
.Ldone:
	isf_f32_leave
	.size	isf_ukernel_gemm_f32_8x8_sme2, .-isf_ukernel_gemm_f32_8x8_sme2

	.section	.note.GNU-stack,"",%progbits
