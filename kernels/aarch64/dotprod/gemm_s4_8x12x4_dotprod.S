/* gemm_s4_8x12x4_dotprod
 *
 * int8 × int4 -> int32 GEMM micro-kernel: 8x12 tile, sdot by element, 4 k steps per block: gemm_s8_8x12x4_dotprod
 * on int4 B panels (isf_internal.h, "int4 B panels"). ABI as there: x0 k_blocks (even), x1 A panel, x2 B panel,
 * x3 C, x4 ldc in elements, w5 accumulate, x6 epilogue. Same registers for the tile: c(r, 4j..4j+3) in
 * v(8 + 3r + j), v8-v31, and the same store and quantized outputs (isf_s8_8x12x4.h).
 *
 * One pair of k blocks per iteration: A 64 bytes (block 2t's 8 rows in v0, v1, block 2t + 1's in v2, v3) and B
 * 48 packed bytes, one vector per 4 columns, where the int8 kernel reads 96. Each packed vector p is unpacked
 * twice: shl #4 (block 2t) and and 0xF0 (block 2t + 1, the mask in v4) give 16 times the int4 values, each fed to
 * 8 sdot: 6 unpacking ops per 48 sdot. The sums are then 16 times the true ones (|16 · Σ a·w| ≤ 16 · 128 · 8 · k,
 * far inside int32 for any Kc block) and are shifted back (sshr #4, exact) before C, PARTIAL or BIAS join them,
 * so unlike the int8 kernel the accumulators start at zero and those are added after the loop. A quantized tile on
 * its own (gemm_qd8_f32_qc4w's, k in one Kc block) keeps them 16 times to its conversion, scvtf #4, and starts
 * them at 16 × its ROW_OFFSET (isf_epilogue_a64.h's x16_start): 24 sshr and 24 mla fewer, as many mul for movi.
 *
 * Registers: 24 accumulators, 4 A, the mask, the unpacked vector v5 and the packed ones in v6, v7: all 32. Every
 * load is 8 sdot or more ahead of its first use: block 2t + 1's A at the top (used after block 2t's first 8 sdot),
 * the next packed vector while the current one's 16 sdot run, the next pair's block 2t A and first packed vector
 * during the last 8 sdot. The last pair is peeled without those loads, so nothing past the panels is read.
 */

#include "kernels/aarch64/dotprod/isf_s8_8x12x4.h" /* from the source root: also from the .inst-encoded copy */

/* The pair's sdot are spelled out with literal registers (the .inst encoder of old assemblers reads no macro
 * arguments): per column group (accumulators v8 + j, v11 + j, …, v29 + j for rows 0-7), the unpacked vector
 * against rows 0-3 in v0 / v2 and 4-7 in v1 / v3, by element. */
/* One pair of blocks; on entry v0, v1 hold block 2t's A and v6 the first packed vector. \last: no loads for a
 * next pair. */
	.macro	pair last
	ld1	{v2.16b, v3.16b}, [x1], #32
	shl	v5.16b, v6.16b, #4
	ldr	q7, [x2], #16
	sdot	v8.4s, v5.16b, v0.4b[0]
	sdot	v11.4s, v5.16b, v0.4b[1]
	sdot	v14.4s, v5.16b, v0.4b[2]
	sdot	v17.4s, v5.16b, v0.4b[3]
	sdot	v20.4s, v5.16b, v1.4b[0]
	sdot	v23.4s, v5.16b, v1.4b[1]
	sdot	v26.4s, v5.16b, v1.4b[2]
	sdot	v29.4s, v5.16b, v1.4b[3]
	and	v6.16b, v6.16b, v4.16b
	sdot	v8.4s, v6.16b, v2.4b[0]
	sdot	v11.4s, v6.16b, v2.4b[1]
	sdot	v14.4s, v6.16b, v2.4b[2]
	sdot	v17.4s, v6.16b, v2.4b[3]
	sdot	v20.4s, v6.16b, v3.4b[0]
	sdot	v23.4s, v6.16b, v3.4b[1]
	sdot	v26.4s, v6.16b, v3.4b[2]
	sdot	v29.4s, v6.16b, v3.4b[3]
	shl	v5.16b, v7.16b, #4
	ldr	q6, [x2], #16
	sdot	v9.4s, v5.16b, v0.4b[0]
	sdot	v12.4s, v5.16b, v0.4b[1]
	sdot	v15.4s, v5.16b, v0.4b[2]
	sdot	v18.4s, v5.16b, v0.4b[3]
	sdot	v21.4s, v5.16b, v1.4b[0]
	sdot	v24.4s, v5.16b, v1.4b[1]
	sdot	v27.4s, v5.16b, v1.4b[2]
	sdot	v30.4s, v5.16b, v1.4b[3]
	and	v7.16b, v7.16b, v4.16b
	sdot	v9.4s, v7.16b, v2.4b[0]
	sdot	v12.4s, v7.16b, v2.4b[1]
	sdot	v15.4s, v7.16b, v2.4b[2]
	sdot	v18.4s, v7.16b, v2.4b[3]
	sdot	v21.4s, v7.16b, v3.4b[0]
	sdot	v24.4s, v7.16b, v3.4b[1]
	sdot	v27.4s, v7.16b, v3.4b[2]
	sdot	v30.4s, v7.16b, v3.4b[3]
	shl	v5.16b, v6.16b, #4
	sdot	v10.4s, v5.16b, v0.4b[0]
	sdot	v13.4s, v5.16b, v0.4b[1]
	sdot	v16.4s, v5.16b, v0.4b[2]
	sdot	v19.4s, v5.16b, v0.4b[3]
	sdot	v22.4s, v5.16b, v1.4b[0]
	sdot	v25.4s, v5.16b, v1.4b[1]
	sdot	v28.4s, v5.16b, v1.4b[2]
	sdot	v31.4s, v5.16b, v1.4b[3]
	and	v5.16b, v6.16b, v4.16b
	.if	\last == 0
	ld1	{v0.16b, v1.16b}, [x1], #32
	ldr	q6, [x2], #16
	.endif
	sdot	v10.4s, v5.16b, v2.4b[0]
	sdot	v13.4s, v5.16b, v2.4b[1]
	sdot	v16.4s, v5.16b, v2.4b[2]
	sdot	v19.4s, v5.16b, v2.4b[3]
	sdot	v22.4s, v5.16b, v3.4b[0]
	sdot	v25.4s, v5.16b, v3.4b[1]
	sdot	v28.4s, v5.16b, v3.4b[2]
	sdot	v31.4s, v5.16b, v3.4b[3]
	.endm

/* One row of \src (C, or the partial sums) added to accumulators \a, \b, \c through v0-v2; \src steps on. */
	.macro	add_row src, stride, a, b, c
	ld1	{v0.4s, v1.4s, v2.4s}, [\src], \stride
	add	v\a\().4s, v\a\().4s, v0.4s
	add	v\b\().4s, v\b\().4s, v1.4s
	add	v\c\().4s, v\c\().4s, v2.4s
	.endm

/* The 8 rows \stride bytes apart from \src added to the accumulators. */
	.macro	add_tile src, stride
	add_row	\src, \stride, 8, 9, 10
	add_row	\src, \stride, 11, 12, 13
	add_row	\src, \stride, 14, 15, 16
	add_row	\src, \stride, 17, 18, 19
	add_row	\src, \stride, 20, 21, 22
	add_row	\src, \stride, 23, 24, 25
	add_row	\src, \stride, 26, 27, 28
	add_row	\src, \stride, 29, 30, 31
	.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s4_8x12x4_dotprod
	.type	isf_ukernel_gemm_s4_8x12x4_dotprod, %function
isf_ukernel_gemm_s4_8x12x4_dotprod:
	tile_prologue
	x16_start	.Lblocks
	.irp	r, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	movi	v\r\().16b, #0
	.endr
.Lblocks:
	lsr	x0, x0, #1
	cbz	x0, .Ladd
	movi	v4.16b, #0xf0
	ld1	{v0.16b, v1.16b}, [x1], #32
	ldr	q6, [x2], #16
	subs	x0, x0, #1
	b.eq	.Lfinal
.Lloop:
	pair	0
	subs	x0, x0, #1
	b.ne	.Lloop
.Lfinal:
	pair	1
	// the sums were 16 times the true ones: kept so for a quantized tile on its own (x16_start)
	tbnz	w10, #ISF_EP_BIT_SUMS_X16, .Lconvert_x16
	.irp	r, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	sshr	v\r\().4s, v\r\().4s, #4
	.endr
.Ladd:
	// then the old C (accumulate = 1) or the partial sums, and the bias, all wrapping as int32 addition does
	cbz	w5, .Lno_c
	mov	x9, x3
	add_tile	x9, x4
	b	.Lbias_step
.Lno_c:
	tbz	w10, #ISF_EP_BIT_PARTIAL, .Lbias_step
	ldr	x9, [x6, #ISF_EP_PARTIAL]
	ldr	w11, [x6, #ISF_EP_PARTIAL_LD]
	lsl	x11, x11, #2
	add_tile	x9, x11
.Lbias_step:
	tbz	w10, #ISF_EP_BIT_BIAS, .Lsums
	ldr	x9, [x6, #ISF_EP_BIAS]
	ld1	{v0.4s, v1.4s, v2.4s}, [x9]
	by_column	add
	tile_epilogue	1
	.size	isf_ukernel_gemm_s4_8x12x4_dotprod, .-isf_ukernel_gemm_s4_8x12x4_dotprod

	.section	.note.GNU-stack,"",%progbits
