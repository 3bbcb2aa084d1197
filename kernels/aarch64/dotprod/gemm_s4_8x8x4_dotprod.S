/* gemm_s4_8x8x4_dotprod
 *
 * int8 × int4 -> int32 GEMM micro-kernel: 8x8 tile, sdot by element, 4 k steps per block: gemm_s8_8x8x4_dotprod on
 * int4 B panels (isf_internal.h, "int4 B panels"), the column sibling of gemm_s4_8x12x4_dotprod. ABI as there:
 * x0 k_blocks (even), x1 A panel, x2 B panel, x3 C, x4 ldc in elements, w5 accumulate, x6 epilogue. The tile,
 * its store and quantized outputs: isf_s8_8x8x4.h (c(r, 4j..4j+3) in v(16 + 2r + j)).
 *
 * One pair of k blocks per iteration: A 64 bytes (block 2t's 8 rows in v0, v1, block 2t + 1's in v2, v3) and B
 * 32 packed bytes, one vector per 4 columns. Each packed vector is unpacked twice: shl #4 (block 2t) and and 0xF0
 * (block 2t + 1, the mask in v4) give 16 times the int4 values, each fed to 8 sdot: 4 unpacking ops per 32 sdot.
 * The sums are then 16 times the true ones and are shifted back (sshr #4, exact) before C, PARTIAL or BIAS join
 * them, or kept so for a quantized tile on its own (x16_start), as gemm_s4_8x12x4_dotprod does. Loads run 8 sdot
 * or more ahead of their first use, the last pair is peeled without the next pair's loads, so nothing past the
 * panels is read.
 */

#include "kernels/aarch64/dotprod/isf_s8_8x8x4.h" /* from the source root: also from the .inst-encoded copy */

/* One pair of blocks; on entry v0, v1 hold block 2t's A and v6 the first packed vector. \last: no loads for a
 * next pair. Literal registers: the .inst encoder of old assemblers reads no macro arguments. */
	.macro	pair last
	ld1	{v2.16b, v3.16b}, [x1], #32
	shl	v5.16b, v6.16b, #4
	ldr	q7, [x2], #16
	sdot	v16.4s, v5.16b, v0.4b[0]
	sdot	v18.4s, v5.16b, v0.4b[1]
	sdot	v20.4s, v5.16b, v0.4b[2]
	sdot	v22.4s, v5.16b, v0.4b[3]
	sdot	v24.4s, v5.16b, v1.4b[0]
	sdot	v26.4s, v5.16b, v1.4b[1]
	sdot	v28.4s, v5.16b, v1.4b[2]
	sdot	v30.4s, v5.16b, v1.4b[3]
	and	v6.16b, v6.16b, v4.16b
	sdot	v16.4s, v6.16b, v2.4b[0]
	sdot	v18.4s, v6.16b, v2.4b[1]
	sdot	v20.4s, v6.16b, v2.4b[2]
	sdot	v22.4s, v6.16b, v2.4b[3]
	sdot	v24.4s, v6.16b, v3.4b[0]
	sdot	v26.4s, v6.16b, v3.4b[1]
	sdot	v28.4s, v6.16b, v3.4b[2]
	sdot	v30.4s, v6.16b, v3.4b[3]
	shl	v5.16b, v7.16b, #4
	sdot	v17.4s, v5.16b, v0.4b[0]
	sdot	v19.4s, v5.16b, v0.4b[1]
	sdot	v21.4s, v5.16b, v0.4b[2]
	sdot	v23.4s, v5.16b, v0.4b[3]
	sdot	v25.4s, v5.16b, v1.4b[0]
	sdot	v27.4s, v5.16b, v1.4b[1]
	sdot	v29.4s, v5.16b, v1.4b[2]
	sdot	v31.4s, v5.16b, v1.4b[3]
	and	v5.16b, v7.16b, v4.16b
	.if	\last == 0
	ld1	{v0.16b, v1.16b}, [x1], #32
	ldr	q6, [x2], #16
	.endif
	sdot	v17.4s, v5.16b, v2.4b[0]
	sdot	v19.4s, v5.16b, v2.4b[1]
	sdot	v21.4s, v5.16b, v2.4b[2]
	sdot	v23.4s, v5.16b, v2.4b[3]
	sdot	v25.4s, v5.16b, v3.4b[0]
	sdot	v27.4s, v5.16b, v3.4b[1]
	sdot	v29.4s, v5.16b, v3.4b[2]
	sdot	v31.4s, v5.16b, v3.4b[3]
	.endm

/* One row of \src (C, or the partial sums) added to accumulators \a, \b through v0, v1; \src steps on. */
	.macro	add_row src, stride, a, b
	ld1	{v0.4s, v1.4s}, [\src], \stride
	add	v\a\().4s, v\a\().4s, v0.4s
	add	v\b\().4s, v\b\().4s, v1.4s
	.endm

/* The 8 rows \stride bytes apart from \src added to the accumulators. */
	.macro	add_tile src, stride
	add_row	\src, \stride, 16, 17
	add_row	\src, \stride, 18, 19
	add_row	\src, \stride, 20, 21
	add_row	\src, \stride, 22, 23
	add_row	\src, \stride, 24, 25
	add_row	\src, \stride, 26, 27
	add_row	\src, \stride, 28, 29
	add_row	\src, \stride, 30, 31
	.endm

	.text
	.p2align	4
	.globl	isf_ukernel_gemm_s4_8x8x4_dotprod
	.type	isf_ukernel_gemm_s4_8x8x4_dotprod, %function
isf_ukernel_gemm_s4_8x8x4_dotprod:
	tile_prologue
	x16_start	.Lblocks
	.irp	r, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
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
	.irp	r, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
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
	ld1	{v0.4s, v1.4s}, [x9]
	by_column	add
	tile_epilogue	1
	.size	isf_ukernel_gemm_s4_8x8x4_dotprod, .-isf_ukernel_gemm_s4_8x8x4_dotprod

	.section	.note.GNU-stack,"",%progbits
