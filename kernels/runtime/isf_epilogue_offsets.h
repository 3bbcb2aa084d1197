/* Where the assembly kernels find the fields of isf_epilogue (isf_internal.h, which checks them with a static
 * assertion): preprocessor constants only, so a .S kernel can include it. */
#ifndef ISAFORGE_EPILOGUE_OFFSETS_H
#define ISAFORGE_EPILOGUE_OFFSETS_H

/* Pointers are 8 bytes on AArch64, 4 on AArch32. */
#if defined(__aarch64__) || defined(__LP64__)
#define ISF_EP_PTR 8
#else
#define ISF_EP_PTR 4
#endif
#define ISF_EP_STEPS 0
#define ISF_EP_MIN 4
#define ISF_EP_MAX 8
#define ISF_EP_MIN_F16 12
#define ISF_EP_MAX_F16 14
#define ISF_EP_BIAS 16
#define ISF_EP_PARTIAL (16 + ISF_EP_PTR)
#define ISF_EP_ROW_OFFSET (16 + 2 * ISF_EP_PTR)
#define ISF_EP_COL_SUM (16 + 3 * ISF_EP_PTR)
#define ISF_EP_ROW_SCALE (16 + 4 * ISF_EP_PTR)
#define ISF_EP_COL_SCALE (16 + 5 * ISF_EP_PTR)
#define ISF_EP_OUT_BIAS (16 + 6 * ISF_EP_PTR)
#define ISF_EP_PARTIAL_LD (16 + 7 * ISF_EP_PTR)
#define ISF_EP_OUT_ZP (20 + 7 * ISF_EP_PTR)
#define ISF_EP_QMIN (24 + 7 * ISF_EP_PTR)
#define ISF_EP_QMAX (28 + 7 * ISF_EP_PTR)

/* isf_epilogue.steps: the bit number of each ISF_EPILOGUE_* step (isf_internal.h builds its enum from these). */
#define ISF_EP_BIT_BIAS 0
#define ISF_EP_BIT_CLAMP 1
#define ISF_EP_BIT_PARTIAL 2
#define ISF_EP_BIT_ROW_OFFSET 3
#define ISF_EP_BIT_TO_F32 4
#define ISF_EP_BIT_ROW_SCALE 5
#define ISF_EP_BIT_OUT_BIAS 6
#define ISF_EP_BIT_TO_S8 7
#define ISF_EP_BIT_SMALL_SUMS 8

#endif
