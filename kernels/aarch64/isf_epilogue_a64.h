/* What the AArch64 int8 assembly kernels share, for assembly only: the epilogue offsets and step bits, the saving
 * and restoring of d8-d15, the starts from C or the partial sums, and the quantized outputs' steps, written once
 * for every tile (the 8x12x4 dotprod tile of isf_s8_8x12x4.h, the 8x8 row-order one of isf_rows_8x8_a64.h).
 * Included from the source root ("kernels/aarch64/isf_epilogue_a64.h"), so the .inst-encoded copy of a kernel (in
 * the build directory) finds it; baseline Advanced SIMD only, so nothing here needs the .inst encoder, which
 * rewrites the kernel file alone.
 *
 * Register contract: x0 k_blocks, x3 C, x4 ldc in bytes, x6 the epilogue, w10 its steps; x9, x11 (x12 in open_s8)
 * scratch.
 * The tile's shape comes from macros the including file defines before it expands these (assembler macros are
 * looked up where they are expanded):
 *   load_tile src, stride   the tile's rows from memory \stride bytes apart (\src steps on)
 *   store_s32               the int32 tile to C (x3, x4)
 *   each op, v              one step on every accumulator: acc = op(acc), or acc = acc op \v
 *   columns field           the field's NR fp32/int32 column values into the column vectors (x9 scratch)
 *   by_column op            acc = acc op its column vector
 *   rows field              the field's 8 row values into the row vectors (x9 scratch)
 *   by_row op               `row` on each of the 8 rows with its lane of the row vectors
 *   store_f32               the fp32 tile out after the clamp, then to .Lreturn
 *   store_s8 clamp          the int8 tile out from fcvtns's int32 (zero point in the int16 lanes of v0, to add
 *                           after the first narrowing: to_s16; x4 = ldc bytes), clamped by clamp_s8 \clamp
 *                           (1: qmin bytes in v3, qmax in v4; 0: qmin, qmax = −128, 127, nothing to clamp)
 */
#ifndef ISAFORGE_EPILOGUE_A64_H
#define ISAFORGE_EPILOGUE_A64_H
/* Assembly: not for clang-format. */
/* clang-format off */

#include "isf_epilogue_offsets.h"

/* A bit of the kernel's own copy of the steps (w10) past the driver's (bits 0-7): an int4 kernel's quantized tile
 * whose sums stay 16 times the true ones (x16_start). */
#define ISF_EP_BIT_SUMS_X16 31

/* v\r = op(v\r), or v\r = v\r op \v: one accumulator. */
	.macro	one op, r, v
	.ifb	\v
	\op	v\r\().4s, v\r\().4s
	.else
	\op	v\r\().4s, v\r\().4s, \v\().4s
	.endif
	.endm

/* `one \op, r, \v` on each accumulator r of \regs: a tile's `each` (all of them) and `by_column` (those of one
 * column vector). (The .irp goes through `one`: inside a macro the \() that ends \r would be taken by the macro,
 * and \r.4s read as one name.) */
	.macro	over op, v, regs:vararg
	.irp	r, \regs
	one	\op, \r, \v
	.endr
	.endm

/* The epilogue's pointer at \field (x9) and the vectors \regs loaded from it: a tile's `columns` and `rows`. */
	.macro	load_field field, regs:vararg
	ldr	x9, [x6, #\field]
	ld1	{\regs}, [x9]
	.endm

/* One row of the tile (\a, \b[, \c]) by the row's value, lane \i of \v: mla adds the column vectors (v0, v1[, v2])
 * times it (ROW_OFFSET after the loop), mul sets the row to them times it (ROW_OFFSET as the start: x16_start),
 * any other \op multiplies the row by it (fmul: ROW_SCALE). */
	.macro	row op, v, i, a, b, c
	.ifc	\op, fmul
	\op	v\a\().4s, v\a\().4s, \v\().s[\i]
	\op	v\b\().4s, v\b\().4s, \v\().s[\i]
	.ifnb	\c
	\op	v\c\().4s, v\c\().4s, \v\().s[\i]
	.endif
	.else
	\op	v\a\().4s, v0.4s, \v\().s[\i]
	\op	v\b\().4s, v1.4s, \v\().s[\i]
	.ifnb	\c
	\op	v\c\().4s, v2.4s, \v\().s[\i]
	.endif
	.endif
	.endm

/* scvtf of an int4 kernel's sums, 16 times the true ones (SUMS_X16): to fp32 divided by 16, exact, since they are
 * multiples of 16 (`each scvtf_x16` through `one`). */
	.macro	scvtf_x16 d, s
	scvtf	\d, \s, #4
	.endm

/* TO_S8's int32 values \a, \b (fcvtns's, no zero point yet) to the eight int16 of v\h, saturated, then plus the
 * zero point (int16 lanes of v0), saturating: exact, as `quantize` says. */
	.macro	to_s16 h, a, b
	sqxtn	v\h\().4h, v\a\().4s
	sqxtn2	v\h\().8h, v\b\().4s
	sqadd	v\h\().8h, v\h\().8h, v0.8h
	.endm

/* The int8 clamp of \regs (vector arrangement \t: 8b or 16b) to qmin (v3), qmax (v4), when \clamp is 1; 0: the clamp
 * spans all of int8 and the saturating narrowing before it was the clamp. */
	.macro	clamp_s8 clamp, t, regs:vararg
	.if	\clamp
	.irp	r, \regs
	clamp_one	smax, \t, \r, v3
	.endr
	.irp	r, \regs
	clamp_one	smin, \t, \r, v4
	.endr
	.endif
	.endm

/* \r = \op(\r, \v) on \t lanes (through a macro of its own, as `over` goes through `one`). */
	.macro	clamp_one op, t, r, v
	\op	\r\().\t, \r\().\t, \v\().\t
	.endm

/* TO_S8 on two rows of 8 int32 (\a, \b and \c, \d): into the low 8 bytes of v1 and the high ones, through int16
 * with the zero point (to_s16, v1 and v2), saturated again, then clamped (clamp_s8). */
	.macro	narrow_s8 clamp, a, b, c, d
	to_s16	1, \a, \b
	to_s16	2, \c, \d
	sqxtn	v1.8b, v1.8h
	sqxtn2	v1.16b, v2.8h
	clamp_s8	\clamp, 16b, v1
	.endm

/* TO_S8's clamp: to \open when qmin, qmax are −128, 127 (qmax − qmin = 255 says it, both in −128…127: the last
 * sqxtn saturates to them, no smax/smin), else qmin's bytes into v3, qmax's into v4 (w9, w11, w12 scratch). */
	.macro	open_s8 open
	ldp	w9, w11, [x6, #ISF_EP_QMIN]
	sub	w12, w11, w9
	cmp	w12, #255
	b.eq	\open
	dup	v3.16b, w9
	dup	v4.16b, w11
	.endm

/* Saves d8-d15 (AAPCS64: callee-saved low halves), makes x4 ldc in bytes and reads the steps into w10. */
	.macro	tile_prologue
	stp	d8, d9, [sp, #-64]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	lsl	x4, x4, #2
	ldr	w10, [x6, #ISF_EP_STEPS]
	.endm

/* The accumulators from \src (\stride bytes between rows), then BIAS on top (.Lbias_c), then the k loop
 * (.Lstart) or, with no k block, \done. */
	.macro	start_from src, stride, done
	load_tile	\src, \stride
	tbnz	w10, #ISF_EP_BIT_BIAS, .Lbias_c
	cbnz	x0, .Lstart
	b	\done
	.endm

/*
 * The int4 kernels' start. A quantized tile on its own (TO_F32 or TO_S8; accumulate = 0, no PARTIAL, no BIAS) keeps
 * its sums 16 times the true ones to the end: with SUMS_X16 set in w10 the kernel goes from its loop to `quantize`'s
 * .Lconvert_x16, scvtf #4, where 24 sshr #4 came before (exact either way: they are multiples of 16). Its ROW_OFFSET, if any, becomes the sums'
 * start, as XNNPACK's dynamically quantized kernels start theirs: each accumulator at its row's value times 16 (the
 * tile's shift_rows) times its column's (`by_row mul`), one mul in place of a movi's zero and of the epilogue's mla;
 * the bits are the same, since 16 × (sums + ROW_OFFSET) stays inside int32 for any k one Kc block holds (16 · 255 ·
 * 8 · 65536 < 2^31), and ROW_OFFSET leaves the steps' copy in w10, so `quantize` does not add it again. Then to \go,
 * past the zeroing. Any other tile falls through to start at zero and shifts its sums back after the loop (when
 * SUMS_X16 is not set), before C, PARTIAL and BIAS join them. w11 scratch.
 */
	.macro	x16_start go
	mov	w11, #((1 << ISF_EP_BIT_PARTIAL) | (1 << ISF_EP_BIT_BIAS))
	and	w11, w10, w11
	orr	w11, w11, w5
	cbnz	w11, 1f
	mov	w11, #((1 << ISF_EP_BIT_TO_F32) | (1 << ISF_EP_BIT_TO_S8))
	tst	w10, w11
	b.eq	1f
	orr	w10, w10, #(1 << ISF_EP_BIT_SUMS_X16)
	tbz	w10, #ISF_EP_BIT_ROW_OFFSET, 1f
	columns	ISF_EP_COL_SUM
	rows	ISF_EP_ROW_OFFSET
	shift_rows	4
	by_row	mul
	and	w10, w10, #(0xffffffff ^ (1 << ISF_EP_BIT_ROW_OFFSET))
	b	\go
1:
	.endm

/* PARTIAL (accumulate = 0): the accumulators start from the partial rows, partial_ld int32 apart, then BIAS. */
	.macro	partial
.Lpartial:
	ldr	x9, [x6, #ISF_EP_PARTIAL]
	ldr	w11, [x6, #ISF_EP_PARTIAL_LD]
	lsl	x11, x11, #2
	start_from	x9, x11, .Lsums
	.endm

/* The accumulators hold the tile's int32 sums (C, PARTIAL and BIAS already in): a quantized output goes to
 * .Lquantized, the int32 tile out through .Lstore; .Lreturn restores d8-d15 and returns. */
	.macro	tile_store
.Lsums:
	tbnz	w10, #ISF_EP_BIT_TO_F32, .Lquantized
	tbnz	w10, #ISF_EP_BIT_TO_S8, .Lquantized
	// write the MRxNR tile, row stride ldc
.Lstore:
	store_s32
.Lreturn:
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #64
	ret
	.endm

/* TO_F32 or TO_S8 on the tile's int32 sums in row order: ROW_OFFSET in int32, then to fp32 and the scales, each
 * step on the whole tile in place, every parameter loaded once per tile. The fp32 steps are separate fmul/fadd,
 * never fmla: one rounding each, as the contract says. TO_S8 is fcvtns (to nearest, ties to even, saturating to
 * int32), then the kernel's store_s8: sqxtn to int16, sqadd out_zp in int16 (v0.8h), sqxtn to int8, smax/smin
 * qmin/qmax (v3, v4). Exact: the byte is clamp(x + zp, qmin, qmax) with x = rne(f) in unbounded integers. Where
 * x lies in int16, sqadd gives x + zp, or saturates only where x + zp is already beyond the int8 range on that
 * side; where x (or fcvtns's int32 saturation of it) lies beyond int16, sqxtn gives 2^15 − 1 or −2^15, and with
 * −128 ≤ zp ≤ 127 the sum stays beyond the int8 range on x's side, as x + zp does. The last sqxtn keeps the order
 * and the int8 clamp lies inside its range. With qmin, qmax = −128, 127 (the plan's default) that saturation is the
 * clamp: open_s8 sends the tile to the store without smax/smin (store_s8 0). Without CLAMP, TO_F32 goes to \f32.
 * \x16: 1 in the int4 kernels, which also enter at .Lconvert_x16 (x16_start). */
	.macro	quantize f32, x16=0
	tbz	w10, #ISF_EP_BIT_ROW_OFFSET, .Lconvert
	columns	ISF_EP_COL_SUM
	rows	ISF_EP_ROW_OFFSET
	by_row	mla
.Lconvert:
	each	scvtf
.Lconverted:
	// ROW_SCALE belongs to TO_F32 (TO_F32 wins if both outputs are set, as in the scalar definition)
	tbz	w10, #ISF_EP_BIT_TO_F32, .Lcol_scale
	tbz	w10, #ISF_EP_BIT_ROW_SCALE, .Lcol_scale
	rows	ISF_EP_ROW_SCALE
	by_row	fmul
.Lcol_scale:
	columns	ISF_EP_COL_SCALE
	by_column	fmul
	tbz	w10, #ISF_EP_BIT_TO_F32, .Lto_s8
	tbz	w10, #ISF_EP_BIT_OUT_BIAS, .Lclamp
	columns	ISF_EP_OUT_BIAS
	by_column	fadd
.Lclamp:
	tbz	w10, #ISF_EP_BIT_CLAMP, \f32
	add	x9, x6, #ISF_EP_MIN
	ld2r	{v5.4s, v6.4s}, [x9]
	each	fmax, v5
	each	fmin, v6
	store_f32
	// TO_S8: C is int8, ldc in bytes
.Lto_s8:
	lsr	x4, x4, #2
	each	fcvtns
	ldr	w9, [x6, #ISF_EP_OUT_ZP]
	dup	v0.8h, w9
	open_s8	.Lto_s8_open
	store_s8	1
	b	.Lreturn
.Lto_s8_open:
	store_s8	0
	b	.Lreturn
	.if	\x16
	// an int4 tile whose sums are 16 times the true ones comes here from its loop (x16_start)
.Lconvert_x16:
	each	scvtf_x16
	b	.Lconverted
	.endif
	.endm

/* clang-format on */
#endif
