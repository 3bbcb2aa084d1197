/* isf_sme2_float_store.h: what the fp32-summing SME2 kernels (fp32 tiles in ZA, fp32 C) share around their loops:
 * the entry and exit of the streaming call, the fp32 epilogue on rows of C, the plain store of a 2VL x 2VL tile
 * from ZA's four .s tiles and one k block of that tile's widening outer products. Assembler macros of SME1 and
 * streaming SVE only: inst.py does not rewrite included files or macro arguments, so the SME2 instructions
 * (multi-vector loads, mova of slice groups, ZA-array dot products) stay in the kernels.
 *
 * Register conventions (the micro-kernel ABI, kernels/runtime/isf_internal.h, plus these):
 *   x3 C, x4 ldc in bytes (isf_f32_enter scales it), w5 accumulate, x6 the epilogue;
 *   w9 steps, w10/w11 the clamp bounds (-Inf/+Inf when there is no CLAMP), x14 the bias pointer, read before
 *   smstart, which keeps general registers but zeroes Z and P;
 *   p0 every .s lane; z16/z17 the bias of the row's two vectors (-0.0 without BIAS), z18/z19 old C, z20/z21 the
 *   bounds (isf_f32_ep_consts sets them).
 * A missing step is applied as its identity rather than branched around per row: x + -0.0 = x for every x, -0
 * included, and fmax(x, -Inf) = fmin(x, +Inf) = x, NaN included (every value comes from arithmetic, so no
 * signalling NaN is quietened that would not have been).
 */
#ifndef ISAFORGE_SME2_FLOAT_STORE_H
#define ISAFORGE_SME2_FLOAT_STORE_H

#include "isf_epilogue_offsets.h"

/* Entry: d8-d15 saved (smstart and smstop zero z8-z15, whose low halves the caller keeps), the epilogue's fields in
 * general registers, streaming mode and ZA on, ZA zeroed (explicitly: the sums never depend on how ZA was left). */
.macro isf_f32_enter
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	lsl	x4, x4, #2
	ldr	w9, [x6, #ISF_EP_STEPS]
	mov	w10, #0xff800000
	mov	w11, #0x7f800000
	tbz	w9, #ISF_EP_BIT_CLAMP, 1f
	ldp	w10, w11, [x6, #ISF_EP_MIN]
1:	ldr	x14, [x6, #ISF_EP_BIAS]
	smstart
	zero	{za}
	ptrue	p0.s
.endm

/* Exit: ZA and streaming mode off, as the caller expects after a normal call, and d8-d15 back. */
.macro isf_f32_leave
	smstop
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
.endm

/* z16/z17: the bias of a row's two vectors or -0.0; z20/z21: the bounds. */
.macro isf_f32_ep_consts
	tbz	w9, #ISF_EP_BIT_BIAS, 1f
	ld1w	{z16.s}, p0/z, [x14]
	ld1w	{z17.s}, p0/z, [x14, #1, mul vl]
	b	2f
1:	mov	w13, #0x80000000
	mov	z16.s, w13
	mov	z17.s, w13
2:	mov	z20.s, w10
	mov	z21.s, w11
.endm

/* Old C added after the sums when accumulating: a row's two vectors (z\lo: the first, z\hi: the next) at \ptr. */
.macro isf_f32_add_old lo, hi, ptr
	cbz	w5, 1f
	ld1w	{z18.s}, p0/z, [\ptr]
	ld1w	{z19.s}, p0/z, [\ptr, #1, mul vl]
	fadd	z\lo\().s, z\lo\().s, z18.s
	fadd	z\hi\().s, z\hi\().s, z19.s
1:
.endm

/* One row of C, two vectors (z\lo: the first, z\hi: the next) at \ptr: + old C after the sums (accumulate), + bias,
 * FMAX then FMIN (IEEE maximum/minimum: a NaN stays NaN, -0 < +0), stored; \ptr moves on a row. */
.macro isf_f32_row lo, hi, ptr
	isf_f32_add_old \lo, \hi, \ptr
	fadd	z\lo\().s, z\lo\().s, z16.s
	fadd	z\hi\().s, z\hi\().s, z17.s
	fmax	z\lo\().s, p0/m, z\lo\().s, z20.s
	fmax	z\hi\().s, p0/m, z\hi\().s, z20.s
	fmin	z\lo\().s, p0/m, z\lo\().s, z21.s
	fmin	z\hi\().s, p0/m, z\hi\().s, z21.s
	st1w	{z\lo\().s}, p0, [\ptr]
	st1w	{z\hi\().s}, p0, [\ptr, #1, mul vl]
	add	\ptr, \ptr, x4
.endm

/* Four rows of C from z24-z27 (their first vectors) and z28-z31 (their second), as a 4-slice mova of two tiles
 * leaves them. */
.macro isf_f32_rows4 ptr
	isf_f32_row 24, 28, \ptr
	isf_f32_row 25, 29, \ptr
	isf_f32_row 26, 30, \ptr
	isf_f32_row 27, 31, \ptr
.endm

/* Row pointers of a 2VL x 2VL tile: x3 row 0 (za0, za1), x15 row VLs (za2, za3); x7 = VLs, the fp32 lanes of a
 * vector; w12 = 0, the first slice. */
.macro isf_f32_tile_rows
	cntw	x7
	mul	x15, x4, x7
	add	x15, x3, x15
	mov	w12, #0
.endm

/* Slice \o of the four row groups starting at w12: two C rows (one per half of the tile), straight from ZA. */
.macro isf_f32_store_slices o
	st1w	{za0h.s[w12, \o]}, p0, [x3]
	st1w	{za1h.s[w12, \o]}, p0, [x3, x7, lsl #2]
	st1w	{za2h.s[w12, \o]}, p0, [x15]
	st1w	{za3h.s[w12, \o]}, p0, [x15, x7, lsl #2]
	add	x3, x3, x4
	add	x15, x15, x4
.endm

/* The whole 2VL x 2VL tile from ZA's rows, no arithmetic (no accumulate, no epilogue step): za0 | za1 over
 * za2 | za3. VLs is a multiple of 4 at every SVL, so four slices a pass. */
.macro isf_f32_store_za_2x2
	isf_f32_tile_rows
1:	isf_f32_store_slices 0
	isf_f32_store_slices 1
	isf_f32_store_slices 2
	isf_f32_store_slices 3
	add	w12, w12, #4
	cmp	w12, w7
	b.ne	1b
.endm

/* One k block of 2VL x 2VL widening outer products (\op: bfmopa or fmopa) into ZA's four .s tiles, p1 every .h
 * lane: A rows [0, VLs) in z\a0, [VLs, 2VLs) in z\a1; B columns the same in z\b0, z\b1. Four tiles so that the
 * four products of a block are independent and each loaded vector is used twice at full width. */
.macro isf_mopa_2x2 op, a0, a1, b0, b1
	\op	za0.s, p1/m, p1/m, z\a0\().h, z\b0\().h
	\op	za1.s, p1/m, p1/m, z\a0\().h, z\b1\().h
	\op	za2.s, p1/m, p1/m, z\a1\().h, z\b0\().h
	\op	za3.s, p1/m, p1/m, z\a1\().h, z\b1\().h
.endm

/* A row kept in four ZA vector groups, moved out to z24/z25, z26/z27, z28/z29, z30/z31: their sum, pairwise, in
 * z24/z25. */
.macro isf_f32_add_groups
	fadd	z24.s, z24.s, z26.s
	fadd	z25.s, z25.s, z27.s
	fadd	z28.s, z28.s, z30.s
	fadd	z29.s, z29.s, z31.s
	fadd	z24.s, z24.s, z28.s
	fadd	z25.s, z25.s, z29.s
.endm

/* A row kernel's row of C from z24/z25 at x3: stored with old C added (accumulate) and nothing else when no epilogue
 * step is asked for, as on every Kc block but the last, else through isf_f32_row. */
.macro isf_f32_row_out
	cbnz	w9, 2f
	isf_f32_add_old 24, 25, x3
	st1w	{z24.s}, p0, [x3]
	st1w	{z25.s}, p0, [x3, #1, mul vl]
	b	3f
2:	isf_f32_ep_consts
	isf_f32_row 24, 25, x3
3:
.endm

/* Old C added to four rows (z24-z27 the first vectors, z28-z31 the second), stored, and nothing else: a Kc block
 * after the first with no epilogue step, so no bias or bound to apply as identities. */
.macro isf_f32_rows4_add_old ptr
	isf_f32_row_add_old 24, 28, \ptr
	isf_f32_row_add_old 25, 29, \ptr
	isf_f32_row_add_old 26, 30, \ptr
	isf_f32_row_add_old 27, 31, \ptr
.endm

.macro isf_f32_row_add_old lo, hi, ptr
	ld1w	{z18.s}, p0/z, [\ptr]
	ld1w	{z19.s}, p0/z, [\ptr, #1, mul vl]
	fadd	z\lo\().s, z\lo\().s, z18.s
	fadd	z\hi\().s, z\hi\().s, z19.s
	st1w	{z\lo\().s}, p0, [\ptr]
	st1w	{z\hi\().s}, p0, [\ptr, #1, mul vl]
	add	\ptr, \ptr, x4
.endm

#endif
