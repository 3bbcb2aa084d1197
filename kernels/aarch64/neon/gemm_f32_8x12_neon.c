/* fp32 GEMM micro-kernel: 8x12 tile, fmla by lane, one k step per block (KR = 1). */
#include <arm_neon.h>

#include "isf_internal.h"

/* The epilogue's operands for the tile, loaded once (not per row) and only for the steps it runs. */
typedef struct {
    float32x4_t bias0, bias1, bias2, lo, hi;
} epilogue_regs;

static inline __attribute__((always_inline)) epilogue_regs load_epilogue(const isf_epilogue *ep, uint32_t steps) {
    epilogue_regs e = {0};
    if (steps & ISF_EPILOGUE_BIAS) {
        const float *bias = ep->bias;
        e.bias0 = vld1q_f32(bias);
        e.bias1 = vld1q_f32(bias + 4);
        e.bias2 = vld1q_f32(bias + 8);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        e.lo = vdupq_n_f32(ep->min);
        e.hi = vdupq_n_f32(ep->max);
    }
    return e;
}

/* FMAX then FMIN (not FMAXNM/FMINNM): a NaN stays NaN, as the epilogue contract says. */
static inline float32x4_t clamp(float32x4_t x, const epilogue_regs *e) { return vminq_f32(vmaxq_f32(x, e->lo), e->hi); }

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the epilogue.
 * `steps` is a constant at every call, so each combination of steps is straight-line code.
 */
static inline __attribute__((always_inline)) void store_row(float *c, float32x4_t x0, float32x4_t x1, float32x4_t x2,
                                                            int accumulate, uint32_t steps, const epilogue_regs *e) {
    if (accumulate) {
        x0 = vaddq_f32(x0, vld1q_f32(c));
        x1 = vaddq_f32(x1, vld1q_f32(c + 4));
        x2 = vaddq_f32(x2, vld1q_f32(c + 8));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        x0 = vaddq_f32(x0, e->bias0);
        x1 = vaddq_f32(x1, e->bias1);
        x2 = vaddq_f32(x2, e->bias2);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = clamp(x0, e);
        x1 = clamp(x1, e);
        x2 = clamp(x2, e);
    }
    vst1q_f32(c, x0);
    vst1q_f32(c + 4, x1);
    vst1q_f32(c + 8, x2);
}

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0
#define ACC_FMA(r, av, lane)                          \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane); \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane); \
    c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane)
#define ACC_STORE(r, steps, acc) store_row(out + (r) * ldc, c##r##0, c##r##1, c##r##2, acc, steps, &e)
#define TILE_STORE(steps, acc)                              \
    do {                                                    \
        const epilogue_regs e = load_epilogue(ep, (steps)); \
        ACC_STORE(0, steps, acc);                           \
        ACC_STORE(1, steps, acc);                           \
        ACC_STORE(2, steps, acc);                           \
        ACC_STORE(3, steps, acc);                           \
        ACC_STORE(4, steps, acc);                           \
        ACC_STORE(5, steps, acc);                           \
        ACC_STORE(6, steps, acc);                           \
        ACC_STORE(7, steps, acc);                           \
    } while (0)

/* The tile's store for the epilogue's `steps` with both steps and `acc` constants, so that each combination is
 * straight-line code (clang tests `accumulate` per row otherwise); bits with no step here (int32 ones) are ignored. */
#define TILE_STORE_STEPS(acc)                                            \
    do {                                                                 \
        if (steps & ISF_EPILOGUE_CLAMP) {                                \
            if (steps & ISF_EPILOGUE_BIAS) {                             \
                TILE_STORE(ISF_EPILOGUE_BIAS | ISF_EPILOGUE_CLAMP, acc); \
            } else {                                                     \
                TILE_STORE(ISF_EPILOGUE_CLAMP, acc);                     \
            }                                                            \
        } else if (steps & ISF_EPILOGUE_BIAS) {                          \
            TILE_STORE(ISF_EPILOGUE_BIAS, acc);                          \
        } else {                                                         \
            TILE_STORE(ISF_EPILOGUE_NONE, acc);                          \
        }                                                                \
    } while (0)

ISF_UKERNEL(gemm_f32_8x12_neon) {
    const float *pa = a;
    const float *pb = b;
    float *out = c;
    /* 24 accumulators (row r, columns 4j..4j+3 in c<r><j>) + 2 A + 3 B vectors = 29 of 32 registers. */
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4);
        float32x4_t b0 = vld1q_f32(pb), b1 = vld1q_f32(pb + 4), b2 = vld1q_f32(pb + 8);
        pa += 8;
        pb += 12;
        ACC_FMA(0, a0, 0);
        ACC_FMA(1, a0, 1);
        ACC_FMA(2, a0, 2);
        ACC_FMA(3, a0, 3);
        ACC_FMA(4, a1, 0);
        ACC_FMA(5, a1, 1);
        ACC_FMA(6, a1, 2);
        ACC_FMA(7, a1, 3);
    }

    /* Without steps (every k block but a tile's last, and plain GEMMs) this costs a load and a branch, laid out as
     * the fall-through path, where the compilers unswitch `accumulate` themselves as they did before. */
    const uint32_t steps = ep->steps;
    if (__builtin_expect(steps == ISF_EPILOGUE_NONE, 1)) {
        TILE_STORE(ISF_EPILOGUE_NONE, accumulate);
    } else if (accumulate) {
        TILE_STORE_STEPS(1);
    } else {
        TILE_STORE_STEPS(0);
    }
}
