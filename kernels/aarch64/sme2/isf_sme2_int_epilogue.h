/* The int32 epilogue of the SME2 int8 and int4 kernels (gemm_s8_8x8x4_sme2, gemm_s4_8x8x4_sme2 and their row
 * kernels), for assembly only: every step of kernels/runtime/isf_internal.h on rows of int32 sums moved out of ZA,
 * in streaming mode. Only SME1 and streaming SVE/SVE2 instructions here: the .inst encoder of the gcc route
 * rewrites the kernels' own lines, never an included file or a macro argument, so each kernel keeps its SME2
 * instructions (multi-vector loads, the multi-slice mova) in its own file and calls these between them.
 *
 * Register contract (kept by every macro; x0-x2 and z8-z15 are left to the kernels' k loops):
 *   x3 C's next row, x4 C's row stride in bytes (of the output type), w5 accumulate, x6 the epilogue,
 *   w9 steps, x7 the partial sums' row stride in bytes, x11 the partial sums' next row, x13 row_offset's and x15
 *   row_scale's next row (each advances only when its step is on),
 *   p0 every .s lane,
 *   z16/z17 bias, z18/z19 col_sum, z20/z21 col_scale, z22/z23 out_bias (columns of the tile's left / right
 *   vector), z24/z25 the fp32 bounds (CLAMP's, or TO_S8's qmin − out_zp and qmax − out_zp), z26 1.5·2^23,
 *   z27 bits(1.5·2^23) − out_zp, z28-z31 scratch.
 * The rows: a group of up to 4 consecutive rows, row r's left vector in z<r>, its right one in z<r + 4>.
 *
 * Every step is one branch per group (not per row, not per element), then an instruction or two per vector.
 */
#ifndef ISAFORGE_SME2_INT_EPILOGUE_H
#define ISAFORGE_SME2_INT_EPILOGUE_H
/* Assembly: not for clang-format. */
/* clang-format off */

#include "isf_epilogue_offsets.h"

#define ISF_SME2_MAGIC 0x4B400000 /* the bits of 1.5·2^23 */

/* Save d8-d15 (smstart and smstop zero z8-z15, whose low halves the caller keeps) and turn x4 into bytes of the
 * output type: int8 for TO_S8, 4-byte int32 or fp32 otherwise. Before smstart. */
	.macro	isf_int_prologue
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	ldr	w9, [x6, #ISF_EP_STEPS]
	tbnz	w9, #ISF_EP_BIT_TO_S8, .Lisf_prologue_bytes\@
	lsl	x4, x4, #2
.Lisf_prologue_bytes\@:
	.endm

/* One k block of the full kernels' 2VL x 2VL tile: the 4-way outer products of A's vectors z\a0 (rows [0, s/4)),
 * z\a1 (rows [s/4, s/2)) with B's z\b0 (columns [0, s/4)), z\b1 (the rest) into the quadrants za0-za3 (p1: every
 * byte lane). SME1, so a macro. */
	.macro	isf_int_mopa a0, a1, b0, b1
	smopa	za0.s, p1/m, p1/m, z\a0\().b, z\b0\().b
	smopa	za1.s, p1/m, p1/m, z\a0\().b, z\b1\().b
	smopa	za2.s, p1/m, p1/m, z\a1\().b, z\b0\().b
	smopa	za3.s, p1/m, p1/m, z\a1\().b, z\b1\().b
	.endm

/* Four k blocks of the full kernels from one of two register sets (\set 0: A in z0-z7, B in z8-z15; 1: z16-z23,
 * z24-z31), block j's A in the set's z<2j>, z<2j + 1>, its B in the set's z<8 + 2j>, z<9 + 2j> (gemm_s8's loads). */
	.macro	isf_int_mopa_set set
	.if	\set == 0
	isf_int_mopa	0, 1, 8, 9
	isf_int_mopa	2, 3, 10, 11
	isf_int_mopa	4, 5, 12, 13
	isf_int_mopa	6, 7, 14, 15
	.else
	isf_int_mopa	16, 17, 24, 25
	isf_int_mopa	18, 19, 26, 27
	isf_int_mopa	20, 21, 28, 29
	isf_int_mopa	22, 23, 30, 31
	.endif
	.endm

/* The same for gemm_s4's sets: A as above, the two pairs' nibbles in the set's z8-z11 (pair 0's left and right
 * columns, then pair 1's), unpacked first: blocks 0 and 2 (low nibbles) into z12, z13 and z14, z15, blocks 1 and
 * 3 (high nibbles) in place. */
	.macro	isf_int_s4_set set
	.if	\set == 0
	isf_int_nibbles	8, 9, 12, 13
	isf_int_nibbles	10, 11, 14, 15
	isf_int_mopa	0, 1, 12, 13
	isf_int_mopa	2, 3, 8, 9
	isf_int_mopa	4, 5, 14, 15
	isf_int_mopa	6, 7, 10, 11
	.else
	isf_int_nibbles	24, 25, 28, 29
	isf_int_nibbles	26, 27, 30, 31
	isf_int_mopa	16, 17, 28, 29
	isf_int_mopa	18, 19, 24, 25
	isf_int_mopa	20, 21, 30, 31
	isf_int_mopa	22, 23, 26, 27
	.endif
	.endm

/* A pair of int4 k blocks (isf_internal.h's nibble panels), left and right columns' bytes in z\l, z\r: the first
 * block's values times 16 (v << 4) into z\lo, z\hi, the second's (v & 0xF0) in place. */
	.macro	isf_int_nibbles l, r, lo, hi
	lsl	z\lo\().b, z\l\().b, #4
	lsl	z\hi\().b, z\r\().b, #4
	and	z\l\().b, z\l\().b, #0xf0
	and	z\r\().b, z\r\().b, #0xf0
	.endm

/* The row kernels' loops take four chunks of 4 k blocks an iteration (A 16 bytes, B \vectors streaming vectors a
 * chunk), quarters \loop, \q1, \q2, \q3. The entry: x10 the chunks, none to \tail; r = chunks mod 4 ≠ 0 enters at
 * quarter q = 4 − r with A and B q chunks back (never read there), so nothing outside the panels is read. */
	.macro	isf_int_row_chunks vectors, loop, q1, q2, q3, tail
	lsr	x10, x0, #2
	cbz	x10, \tail
	ands	x11, x10, #3
	b.eq	\loop
	neg	x11, x11
	add	x11, x11, #4
	add	x10, x10, x11
	sub	x1, x1, x11, lsl #4
	rdvl	x13, #-\vectors
	madd	x2, x11, x13, x2
	cmp	x11, #2
	b.lo	\q1
	b.eq	\q2
	b	\q3
	.endm

/* The end of an iteration of four chunks: A and B on, back to \loop while chunks are left. */
	.macro	isf_int_row_next vectors, loop
	add	x1, x1, #64
	.if	4 * \vectors > 31
	// addvl takes at most 31 vectors
	addvl	x2, x2, #(2 * \vectors)
	addvl	x2, x2, #(2 * \vectors)
	.else
	addvl	x2, x2, #(4 * \vectors)
	.endif
	subs	x10, x10, #4
	b.ne	\loop
	.endm

/* The row kernels' four pairs of ZA-vector sums, moved out to z0-z7 (pair j in z<2j>, z<2j + 1>), added: the row's
 * left vector in z0, its right one in z4, as isf_int_rows takes one row. */
	.macro	isf_int_row_sums
	add	z0.s, z0.s, z2.s
	add	z1.s, z1.s, z3.s
	add	z0.s, z0.s, z4.s
	add	z1.s, z1.s, z5.s
	add	z0.s, z0.s, z6.s
	add	z4.s, z1.s, z7.s
	.endm

/* The full kernels' store loops: the next group of 4 rows of a quadrant pair (w12 its first slice, w8 the rows of
 * a quadrant), back to \label while any is left. */
	.macro	isf_int_next_group label
	add	w12, w12, #4
	cmp	w12, w8
	b.ne	\label
	.endm

/* smstop (ZA off again, the caller saves nothing), d8-d15 back, return. */
	.macro	isf_int_return
	smstop
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	.endm

/* Two vectors (the tile's left and right columns) of the epilogue's NR-value array at \field into \lo, \hi. */
	.macro	isf_int_columns field, lo, hi
	ldr	x8, [x6, #\field]
	ld1w	{\lo\().s}, p0/z, [x8]
	ld1w	{\hi\().s}, p0/z, [x8, #1, mul vl]
	.endm

/* The epilogue's fields into the registers of the contract, once per tile, in streaming mode with p0 set. Every
 * field is read here, before the first store: C's int8 stores may alias nothing of it, but nothing relies on it. */
	.macro	isf_int_setup
	// the row arrays' pointers whatever the steps (NULL when unused, never read then): so every path to their
	// loads holds the epilogue's pointer, which is what the bench's load provenance follows
	ldr	x11, [x6, #ISF_EP_PARTIAL]
	ldr	x13, [x6, #ISF_EP_ROW_OFFSET]
	ldr	x15, [x6, #ISF_EP_ROW_SCALE]
	tbz	w9, #ISF_EP_BIT_BIAS, .Lisf_setup_bias\@
	isf_int_columns	ISF_EP_BIAS, z16, z17
.Lisf_setup_bias\@:
	tbz	w9, #ISF_EP_BIT_PARTIAL, .Lisf_setup_partial\@
	ldr	w7, [x6, #ISF_EP_PARTIAL_LD]
	lsl	x7, x7, #2
.Lisf_setup_partial\@:
	tbz	w9, #ISF_EP_BIT_ROW_OFFSET, .Lisf_setup_offset\@
	isf_int_columns	ISF_EP_COL_SUM, z18, z19
.Lisf_setup_offset\@:
	tbnz	w9, #ISF_EP_BIT_TO_F32, .Lisf_setup_scales\@
	tbz	w9, #ISF_EP_BIT_TO_S8, .Lisf_setup_done\@
.Lisf_setup_scales\@:
	isf_int_columns	ISF_EP_COL_SCALE, z20, z21
	tbz	w9, #ISF_EP_BIT_OUT_BIAS, .Lisf_setup_out_bias\@
	isf_int_columns	ISF_EP_OUT_BIAS, z22, z23
.Lisf_setup_out_bias\@:
	tbnz	w9, #ISF_EP_BIT_TO_S8, .Lisf_setup_s8\@
	// TO_F32: CLAMP's bounds, when asked
	tbz	w9, #ISF_EP_BIT_CLAMP, .Lisf_setup_done\@
	ld1rw	{z24.s}, p0/z, [x6, #ISF_EP_MIN]
	ld1rw	{z25.s}, p0/z, [x6, #ISF_EP_MAX]
	b	.Lisf_setup_done\@
	// TO_S8: clamp(rne(f) + zp, qmin, qmax) = rne(clamp(f, qmin − zp, qmax − zp)) + zp (rne keeps the order
	// and the whole bounds), the bounds whole numbers in −255…255, exact in fp32
.Lisf_setup_s8\@:
	ldr	w8, [x6, #ISF_EP_OUT_ZP]
	ldr	w10, [x6, #ISF_EP_QMIN]
	sub	w10, w10, w8
	mov	z24.s, w10
	scvtf	z24.s, p0/m, z24.s
	ldr	w10, [x6, #ISF_EP_QMAX]
	sub	w10, w10, w8
	mov	z25.s, w10
	scvtf	z25.s, p0/m, z25.s
	mov	w10, #ISF_SME2_MAGIC
	mov	z26.s, w10
	sub	w10, w10, w8
	mov	z27.s, w10
.Lisf_setup_done\@:
	.endm

/* acc = acc op v on rows 0 .. \rows − 1 of the group: \l for the left vectors, \r for the right ones. */
	.macro	isf_int_each rows, op, l, r
	\op	z0.s, z0.s, \l\().s
	\op	z4.s, z4.s, \r\().s
	.if	\rows > 1
	\op	z1.s, z1.s, \l\().s
	\op	z5.s, z5.s, \r\().s
	\op	z2.s, z2.s, \l\().s
	\op	z6.s, z6.s, \r\().s
	\op	z3.s, z3.s, \l\().s
	\op	z7.s, z7.s, \r\().s
	.endif
	.endm

/* The same with a predicated, destructive op (fmax, fmin). */
	.macro	isf_int_each_p rows, op, l, r
	\op	z0.s, p0/m, z0.s, \l\().s
	\op	z4.s, p0/m, z4.s, \r\().s
	.if	\rows > 1
	\op	z1.s, p0/m, z1.s, \l\().s
	\op	z5.s, p0/m, z5.s, \r\().s
	\op	z2.s, p0/m, z2.s, \l\().s
	\op	z6.s, p0/m, z6.s, \r\().s
	\op	z3.s, p0/m, z3.s, \l\().s
	\op	z7.s, p0/m, z7.s, \r\().s
	.endif
	.endm

/* A unary op on one vector: predicated (scvtf) without \imm, by an immediate (asr) with it. */
	.macro	isf_int_u1 op, v, imm
	.ifb	\imm
	\op	z\v\().s, p0/m, z\v\().s
	.else
	\op	z\v\().s, z\v\().s, \imm
	.endif
	.endm

/* The same on every vector of the group. */
	.macro	isf_int_each_u rows, op, imm
	isf_int_u1	\op, 0, \imm
	isf_int_u1	\op, 4, \imm
	.if	\rows > 1
	isf_int_u1	\op, 1, \imm
	isf_int_u1	\op, 5, \imm
	isf_int_u1	\op, 2, \imm
	isf_int_u1	\op, 6, \imm
	isf_int_u1	\op, 3, \imm
	isf_int_u1	\op, 7, \imm
	.endif
	.endm

/* One row's vectors \l, \r plus the row at x11 (PARTIAL), x11 to the next row. */
	.macro	isf_int_partial_row l, r
	ld1w	{z28.s}, p0/z, [x11]
	ld1w	{z29.s}, p0/z, [x11, #1, mul vl]
	add	z\l\().s, z\l\().s, z28.s
	add	z\r\().s, z\r\().s, z29.s
	add	x11, x11, x7
	.endm

/* One row's vectors times the row's value in \s (broadcast), op mla (int32, wrapping) or fmul (separate rounding). */
	.macro	isf_int_row_op op, s, l, r
	.ifc	\op, mla
	mla	z\l\().s, p0/m, z18.s, \s\().s
	mla	z\r\().s, p0/m, z19.s, \s\().s
	.else
	fmul	z\l\().s, z\l\().s, \s\().s
	fmul	z\r\().s, z\r\().s, \s\().s
	.endif
	.endm

/* ROW_OFFSET (op mla, x13) or ROW_SCALE (op fmul, x15) on the group: one broadcast load per row. */
	.macro	isf_int_by_row rows, op, ptr
	ld1rw	{z28.s}, p0/z, [\ptr]
	isf_int_row_op	\op, z28, 0, 4
	.if	\rows > 1
	ld1rw	{z29.s}, p0/z, [\ptr, #4]
	ld1rw	{z30.s}, p0/z, [\ptr, #8]
	ld1rw	{z31.s}, p0/z, [\ptr, #12]
	isf_int_row_op	\op, z29, 1, 5
	isf_int_row_op	\op, z30, 2, 6
	isf_int_row_op	\op, z31, 3, 7
	.endif
	add	\ptr, \ptr, #(4 * \rows)
	.endm

/* One row to C at x3 (st1w or st1b of .s elements), x3 to the next row. */
	.macro	isf_int_store_row st, l, r
	\st	{z\l\().s}, p0, [x3]
	\st	{z\r\().s}, p0, [x3, #1, mul vl]
	add	x3, x3, x4
	.endm

	.macro	isf_int_store rows, st
	isf_int_store_row	\st, 0, 4
	.if	\rows > 1
	isf_int_store_row	\st, 1, 5
	isf_int_store_row	\st, 2, 6
	isf_int_store_row	\st, 3, 7
	.endif
	.endm

/* accumulate: one row's vectors plus C's old row (added after the sums, as every kernel does). */
	.macro	isf_int_old_row l, r
	ld1w	{z28.s}, p0/z, [x3, #0, mul vl]
	ld1w	{z29.s}, p0/z, [x3, #1, mul vl]
	add	z\l\().s, z\l\().s, z28.s
	add	z\r\().s, z\r\().s, z29.s
	isf_int_store_row	st1w, \l, \r
	.endm

/*
 * The whole epilogue on a group of \rows (1 or 4) consecutive rows of the tile and their store to C. \shift: the
 * int4 kernels' sums are 16 times the true ones (B's nibbles taken times 16), shifted back exactly first.
 */
	.macro	isf_int_rows rows, shift=0
	.if	\shift
	isf_int_each_u	\rows, asr, #\shift
	.endif
	tbz	w9, #ISF_EP_BIT_BIAS, .Lisf_bias\@
	isf_int_each	\rows, add, z16, z17
.Lisf_bias\@:
	tbz	w9, #ISF_EP_BIT_PARTIAL, .Lisf_partial\@
	isf_int_partial_row	0, 4
	.if	\rows > 1
	isf_int_partial_row	1, 5
	isf_int_partial_row	2, 6
	isf_int_partial_row	3, 7
	.endif
.Lisf_partial\@:
	tbz	w9, #ISF_EP_BIT_ROW_OFFSET, .Lisf_offset\@
	isf_int_by_row	\rows, mla, x13
.Lisf_offset\@:
	tbnz	w9, #ISF_EP_BIT_TO_S8, .Lisf_s8\@
	tbnz	w9, #ISF_EP_BIT_TO_F32, .Lisf_f32\@
	// int32 C
	cbz	w5, .Lisf_s32\@
	isf_int_old_row	0, 4
	.if	\rows > 1
	isf_int_old_row	1, 5
	isf_int_old_row	2, 6
	isf_int_old_row	3, 7
	.endif
	b	.Lisf_done\@
.Lisf_s32\@:
	isf_int_store	\rows, st1w
	b	.Lisf_done\@
	// fp32 C: SCVTF rounds to nearest even, then each step one FMUL or FADD rounded on its own (no FMLA, which
	// would round once), CLAMP as FMAX then FMIN (the contract's NaN and signed-zero rules)
.Lisf_f32\@:
	isf_int_each_u	\rows, scvtf
	tbz	w9, #ISF_EP_BIT_ROW_SCALE, .Lisf_row_scale\@
	isf_int_by_row	\rows, fmul, x15
.Lisf_row_scale\@:
	isf_int_each	\rows, fmul, z20, z21
	tbz	w9, #ISF_EP_BIT_OUT_BIAS, .Lisf_out_bias\@
	isf_int_each	\rows, fadd, z22, z23
.Lisf_out_bias\@:
	tbz	w9, #ISF_EP_BIT_CLAMP, .Lisf_clamp\@
	isf_int_each_p	\rows, fmax, z24, z24
	isf_int_each_p	\rows, fmin, z25, z25
.Lisf_clamp\@:
	isf_int_store	\rows, st1w
	b	.Lisf_done\@
	// int8 C: f = (float)r · col_scale, clamped to [qmin − zp, qmax − zp] ⊂ [−255, 255]; + 1.5·2^23 lands in
	// [2^23, 2^24) where the fp32 spacing is 1, so FADD rounds to nearest even and the bits are bits(1.5·2^23) +
	// rne(f); minus bits(1.5·2^23) − zp leaves rne(f) + zp, whose low byte st1b stores
.Lisf_s8\@:
	isf_int_each_u	\rows, scvtf
	isf_int_each	\rows, fmul, z20, z21
	isf_int_each_p	\rows, fmax, z24, z24
	isf_int_each_p	\rows, fmin, z25, z25
	isf_int_each	\rows, fadd, z26, z26
	isf_int_each	\rows, sub, z27, z27
	isf_int_store	\rows, st1b
.Lisf_done\@:
	.endm

#endif
