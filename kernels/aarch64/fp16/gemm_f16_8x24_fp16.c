/* binary16 GEMM micro-kernel (FEAT_FP16): 8x24 tile, fmla .8h by element, fp16 accumulation, one k step per block. */
#include <arm_neon.h>
#include <string.h>

#include "isf_internal.h"

/*
 * Tile: 24 accumulators of 8 halves (row r, columns 8j..8j+7 in c<r><j>) + 1 A + 3 B vectors = 28 of 32
 * registers, 24 fmla per k step. 24 independent accumulators also cover fmla latency × issue width on the
 * widest cores (4 cycles × 4 pipes on Neoverse V1/V2). fmla by element on halves takes its indexed register
 * from v0-v15 only; only the A operand is indexed, so the compilers have room to place it.
 *
 * Two spellings of the same instruction stream:
 *  - clang turns vfmaq_laneq_f16 on the loaded A vector into `fmla vD.8h, vB.8h, vA.h[r]`: 4 loads per step.
 *  - GCC 12 has no by-element pattern for .8h fmla with a lane other than 0: vfmaq_laneq_f16 becomes a dup per
 *    row plus a vector fmla (8 extra vector ops per step, and spills). It does use `fmla ..., vS.h[0]` for a
 *    scalar already in a register, so there each A value is loaded as a scalar (ldr h, no vector-pipe work)
 *    right before its 3 fmla. The loads are addressed below the advanced pointer (offsets -16..-2) because at
 *    offset 0 GCC picks ld1r, which takes a vector-pipe slot. GCC's pre-RA scheduler would hoist the 8 scalar
 *    loads to the top of the loop (8 more live registers, all in v0-v15: spills), hence no-schedule-insns.
 */
#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC optimize("no-schedule-insns")
#define ISF_A_PER_ELEMENT 1
#else
#define ISF_A_PER_ELEMENT 0
#endif

static inline float16x8_t load_f16(const uint16_t *p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }

/* The epilogue's operands for the tile (binary16, as C): loaded once, not per row, and only for the steps it runs. */
typedef struct {
    float16x8_t bias0, bias1, bias2, lo, hi;
} epilogue_regs;

static inline __attribute__((always_inline)) epilogue_regs load_epilogue(const isf_epilogue *ep, uint32_t steps) {
    epilogue_regs e = {0};
    if (steps & ISF_EPILOGUE_BIAS) {
        const uint16_t *bias = ep->bias;
        e.bias0 = load_f16(bias);
        e.bias1 = load_f16(bias + 8);
        e.bias2 = load_f16(bias + 16);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        e.lo = vreinterpretq_f16_u16(vdupq_n_u16(ep->min_f16));
        e.hi = vreinterpretq_f16_u16(vdupq_n_u16(ep->max_f16));
    }
    return e;
}

/* FMAX then FMIN (not FMAXNM/FMINNM): a NaN stays NaN, as the epilogue contract says. */
static inline float16x8_t clamp(float16x8_t x, const epilogue_regs *e) { return vminq_f16(vmaxq_f16(x, e->lo), e->hi); }

/*
 * The old C is added only here, after the k loop, so the loop touches no memory but the panels; then the epilogue,
 * in binary16 like the accumulation. `steps` is a constant at every call: each combination is straight-line code.
 */
static inline __attribute__((always_inline)) void store_row(uint16_t *c, float16x8_t x0, float16x8_t x1, float16x8_t x2,
                                                            int accumulate, uint32_t steps, const epilogue_regs *e) {
    if (accumulate) {
        x0 = vaddq_f16(x0, load_f16(c));
        x1 = vaddq_f16(x1, load_f16(c + 8));
        x2 = vaddq_f16(x2, load_f16(c + 16));
    }
    if (steps & ISF_EPILOGUE_BIAS) {
        x0 = vaddq_f16(x0, e->bias0);
        x1 = vaddq_f16(x1, e->bias1);
        x2 = vaddq_f16(x2, e->bias2);
    }
    if (steps & ISF_EPILOGUE_CLAMP) {
        x0 = clamp(x0, e);
        x1 = clamp(x1, e);
        x2 = clamp(x2, e);
    }
    vst1q_u16(c, vreinterpretq_u16_f16(x0));
    vst1q_u16(c + 8, vreinterpretq_u16_f16(x1));
    vst1q_u16(c + 16, vreinterpretq_u16_f16(x2));
}

/* Named registers rather than an array: an array indexed in a loop may be kept on the stack at -O2. */
#define ACC_DECL(r) float16x8_t c##r##0 = vdupq_n_f16(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0
#if ISF_A_PER_ELEMENT
static inline float16_t load_scalar_f16(const uint16_t *p) {
    float16_t s;
    memcpy(&s, p, sizeof s);
    return s;
}
#define A_LOAD() (void)0
#define ACC_FMA(r)                                    \
    do {                                              \
        float16_t ar = load_scalar_f16(pa + (r) - 8); \
        c##r##0 = vfmaq_n_f16(c##r##0, b0, ar);       \
        c##r##1 = vfmaq_n_f16(c##r##1, b1, ar);       \
        c##r##2 = vfmaq_n_f16(c##r##2, b2, ar);       \
    } while (0)
#else
#define A_LOAD() float16x8_t a0 = load_f16(pa - 8)
#define ACC_FMA(r)                                 \
    c##r##0 = vfmaq_laneq_f16(c##r##0, b0, a0, r); \
    c##r##1 = vfmaq_laneq_f16(c##r##1, b1, a0, r); \
    c##r##2 = vfmaq_laneq_f16(c##r##2, b2, a0, r)
#endif
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

ISF_UKERNEL(gemm_f16_8x24_fp16) {
    const uint16_t *pa = a;
    const uint16_t *pb = b;
    uint16_t *out = c;
    ACC_DECL(0);
    ACC_DECL(1);
    ACC_DECL(2);
    ACC_DECL(3);
    ACC_DECL(4);
    ACC_DECL(5);
    ACC_DECL(6);
    ACC_DECL(7);

    for (size_t kb = 0; kb < k_blocks; kb++) {
        float16x8_t b0 = load_f16(pb), b1 = load_f16(pb + 8), b2 = load_f16(pb + 16);
        pa += 8; /* A of this step is pa[-8..-1] */
        pb += 24;
        A_LOAD();
        ACC_FMA(0);
        ACC_FMA(1);
        ACC_FMA(2);
        ACC_FMA(3);
        ACC_FMA(4);
        ACC_FMA(5);
        ACC_FMA(6);
        ACC_FMA(7);
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
