/*
 * The last part of a float tile's store, on every arch: which TILE_STORE(steps, acc) the tile's epilogue runs, with
 * `steps` and `acc` constants in each, so every combination is straight-line code. The including kernel (or its
 * variant's header) defines TILE_STORE and expands TILE_FINISH() after its loop (ep and accumulate in scope).
 * Also the row lists the kernels' named accumulators are declared and stored by. Macros only: no flags of its own.
 */
#ifndef ISAFORGE_TILE_STEPS_H
#define ISAFORGE_TILE_STEPS_H

#include "isf_internal.h"

/* X(0) … X(n - 1), one statement each: a kernel's accumulators are named registers (an array indexed in a loop may
 * be kept on the stack at -O2), so their rows (or k-step sets) are spelled out; ISF_ROW_STORES_n passes each row
 * the tile's steps and accumulate flag. */
#define ISF_REPEAT_4(X) \
    X(0);               \
    X(1);               \
    X(2);               \
    X(3)
#define ISF_REPEAT_8(X) \
    ISF_REPEAT_4(X);    \
    X(4);               \
    X(5);               \
    X(6);               \
    X(7)
#define ISF_ROW_STORES_4(X, steps, acc) \
    X(0, steps, acc);                   \
    X(1, steps, acc);                   \
    X(2, steps, acc);                   \
    X(3, steps, acc)
#define ISF_ROW_STORES_8(X, steps, acc) \
    ISF_ROW_STORES_4(X, steps, acc);    \
    X(4, steps, acc);                   \
    X(5, steps, acc);                   \
    X(6, steps, acc);                   \
    X(7, steps, acc)

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

/* Without steps (every k block but a tile's last, and plain GEMMs) this costs a load and a branch, laid out as the
 * fall-through path, where the compilers unswitch `accumulate` themselves. */
#define TILE_FINISH()                                          \
    do {                                                       \
        const uint32_t steps = ep->steps;                      \
        if (__builtin_expect(steps == ISF_EPILOGUE_NONE, 1)) { \
            TILE_STORE(ISF_EPILOGUE_NONE, accumulate);         \
        } else if (accumulate) {                               \
            TILE_STORE_STEPS(1);                               \
        } else {                                               \
            TILE_STORE_STEPS(0);                               \
        }                                                      \
    } while (0)

/* TILE_STORE of the SVE tiles with fp32 sums that start at the bias (so only the clamp is left): the bounds are
 * locals lo, hi (SVE vectors cannot live in a struct), loaded only when it clamps, for ISF_TILE_ROWS(steps, acc).
 * Expand only where arm_sve.h is included. */
#define ISF_SVE_TILE_STORE_F32(steps, acc)                              \
    do {                                                                \
        const int has_clamp = ((steps) & ISF_EPILOGUE_CLAMP) != 0;      \
        const svfloat32_t lo = svdup_n_f32(has_clamp ? ep->min : 0.0f); \
        const svfloat32_t hi = svdup_n_f32(has_clamp ? ep->max : 0.0f); \
        ISF_TILE_ROWS(steps, acc);                                      \
    } while (0)

#endif
