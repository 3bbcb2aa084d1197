/*
 * The last part of a float tile's store, on every arch: which TILE_STORE(steps, acc) the tile's epilogue runs, with
 * `steps` and `acc` constants in each, so every combination is straight-line code. The including kernel (or its
 * variant's header) defines TILE_STORE and expands TILE_FINISH() after its loop (ep and accumulate in scope).
 * Macros only: no flags of its own.
 */
#ifndef ISAFORGE_TILE_STEPS_H
#define ISAFORGE_TILE_STEPS_H

#include "isf_internal.h"

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

#endif
