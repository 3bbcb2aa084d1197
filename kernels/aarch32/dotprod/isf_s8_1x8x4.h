/* What gemm_s8_1x8x4_dotprod and gemm_s4_1x8x4_dotprod share: the 1×8 row kept as VLD2.32 deinterleaves it
 * (even columns, odd columns), the VSDOT step on one block of it and the store of the row (isf_internal.h, "The
 * epilogue"). Only the loops differ: how a block of B gets into registers (int8 bytes, or nibbles unpacked). */
#ifndef ISAFORGE_S8_1X8X4_H
#define ISAFORGE_S8_1X8X4_H

#include <arm_neon.h>

#include "isf_internal.h"
#include "isf_quant_neon.h"

/* The row's even and odd columns (VLD2's order). */
typedef struct {
    int32x4_t e, o;
} row8;

static inline row8 add_row(row8 x, const int32_t *p) {
    const int32x4x2_t y = vld2q_s32(p);
    return (row8){vaddq_s32(x.e, y.val[0]), vaddq_s32(x.o, y.val[1])};
}

static inline int8x16_t s8(int32x4_t v) { return vreinterpretq_s8_s32(v); }

/* One block (columns even be, odd bo, 4 k bytes a lane) into the accumulators ce, co with A's 4 bytes of the block
 * in lane `lane` of a8: a macro, since VSDOT's lane must be a literal before any inlining. */
#define ISF_DOT_ROW8(ce, co, be, bo, a8, lane)           \
    do {                                                 \
        (ce) = vdotq_lane_s32((ce), (be), (a8), (lane)); \
        (co) = vdotq_lane_s32((co), (bo), (a8), (lane)); \
    } while (0)

/* The row's sums r (int32, the true ones) stored with every step of the epilogue; ldc is unused (one row). */
static inline __attribute__((always_inline)) void isf_row8_store(row8 r, void *c, int accumulate,
                                                                 const isf_epilogue *ep) {
    if (__builtin_expect((ep->steps & ISF_EPILOGUE_QUANTIZED) != 0, 0)) {
        /* fp32 or int8 C: every step here, on the columns back in order (the parameters are in C's order) */
        const int32x4x2_t z = vzipq_s32(r.e, r.o);
        isf_qn_store_row(ep, c, 2, z.val[0], z.val[1], z.val[0], z.val[0]);
        return;
    }
    int32_t *pc = c;
    if (accumulate) {
        r = add_row(r, pc);
    }
    if (ep->steps & ISF_EPILOGUE_BIAS) { /* int32 wrapping; int32 output is never clamped */
        r = add_row(r, ep->bias);
    }
    const int32x4x2_t out = {{r.e, r.o}};
    vst2q_s32(pc, out);
}

#endif
