/* The quantized epilogue of every int32-summing kernel (gemm_s8's, which gemm_qs8, gemm_qs8_f32 and gemm_qd8_f32
 * run), called directly on random panels: each step combination of isf_internal.h against the scalar
 * isf_epilogue_store_s32 on the naive sums, byte for byte, with guard bytes before the tile, between its rows and
 * after it. Scales that put many values on exact .5 ties, zero points at both ends of int8, clamps that saturate
 * both ways. Exit status: the number of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <math.h>
#include <stdlib.h>

#include "isf_internal.h"

/* NR: 8 × 16 at 2048-bit SVE and SVL; MR: a streaming kernel's 8 × 16 at 2048-bit SVL */
enum { GUARD = 64, FILL = 0x5A, MAX_NR = 128, MAX_MR = ISF_MAX_MR, PAD = 3 };

static uint32_t rng = 12345u;
static uint32_t next_random(void) {
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    return rng;
}
static int8_t random_s8(void) { return (int8_t)(next_random() & 0xFF); }

/* One epilogue case: its steps and how its parameters are drawn. */
typedef struct {
    const char *name;
    uint32_t steps;
    int ties; /* col_scale a power of two below 1: many products land on .5 */
} step_case;

static const step_case cases[] = {
    {"int32", ISF_EPILOGUE_NONE, 0},
    {"int32+bias", ISF_EPILOGUE_BIAS, 0},
    {"s8", ISF_EPILOGUE_TO_S8, 0},
    {"s8+bias", ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_S8, 0},
    {"s8+bias ties", ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_S8, 1},
    {"s8+partial+bias", ISF_EPILOGUE_PARTIAL | ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_S8, 0},
    {"f32+bias", ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_F32, 0},
    {"f32+bias+clamp", ISF_EPILOGUE_BIAS | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_CLAMP, 0},
    {"f32+partial+clamp", ISF_EPILOGUE_PARTIAL | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_CLAMP, 1},
    {"qd8", ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_ROW_SCALE | ISF_EPILOGUE_OUT_BIAS, 0},
    {"qd8+clamp+partial",
     ISF_EPILOGUE_PARTIAL | ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_ROW_SCALE |
         ISF_EPILOGUE_OUT_BIAS | ISF_EPILOGUE_CLAMP,
     0},
    /* The hint: these draws keep every sum far inside ±2^22 (check_tile checks that they do). */
    {"qd8+small", ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_ROW_SCALE | ISF_EPILOGUE_SMALL_SUMS, 0},
    {"qd8+clamp+partial+small",
     ISF_EPILOGUE_PARTIAL | ISF_EPILOGUE_ROW_OFFSET | ISF_EPILOGUE_TO_F32 | ISF_EPILOGUE_ROW_SCALE |
         ISF_EPILOGUE_OUT_BIAS | ISF_EPILOGUE_CLAMP | ISF_EPILOGUE_SMALL_SUMS,
     0},
};

/* Parameters of one case, in arrays long enough for any tile. */
typedef struct {
    int32_t bias[MAX_NR], col_sum[MAX_NR], row_offset[MAX_MR];
    float col_scale[MAX_NR], out_bias[MAX_NR], row_scale[MAX_MR];
    int32_t partial[MAX_MR * (MAX_NR + PAD)];
} params;

static float random_scale(int ties) {
    if (ties) {
        return ldexpf(1.0f, -(int)(1 + next_random() % 4)); /* 1/2 … 1/16: sums land on .5 often */
    }
    return (float)(next_random() % 1000 + 1) * 1e-4f; /* 1e-4 … 0.1 */
}

static isf_epilogue draw(const step_case *sc, params *p, size_t mr, size_t nr, int round) {
    for (size_t j = 0; j < nr; j++) {
        p->bias[j] = (int32_t)(next_random() % 20001) - 10000;
        p->col_sum[j] = (int32_t)(next_random() % 4001) - 2000;
        p->col_scale[j] = random_scale(sc->ties);
        p->out_bias[j] = (float)((int32_t)(next_random() % 2001) - 1000) * 0.01f;
    }
    for (size_t i = 0; i < mr; i++) {
        p->row_offset[i] = (int32_t)(next_random() % 256) - 128;
        p->row_scale[i] = (float)(next_random() % 1000 + 1) * 1e-3f;
    }
    for (size_t i = 0; i < mr * (nr + PAD); i++) {
        p->partial[i] = (int32_t)(next_random() % 200001) - 100000;
    }
    isf_epilogue ep = {.steps = sc->steps, .min = -50.0f, .max = 40.0f, .bias = p->bias};
    ep.partial = p->partial, ep.partial_ld = (uint32_t)(nr + PAD);
    ep.row_offset = p->row_offset, ep.col_sum = p->col_sum, ep.row_scale = p->row_scale;
    ep.col_scale = p->col_scale, ep.out_bias = p->out_bias;
    /* Zero points at both ends and inside; clamps wide open, and narrow so both ends saturate. */
    static const int32_t zps[] = {-128, 127, 0, 5};
    ep.out_zp = zps[round % 4];
    ep.qmin = round % 2 ? -128 : -20, ep.qmax = round % 2 ? 127 : 30;
    return ep;
}

static size_t out_bytes(uint32_t steps) { return steps & ISF_EPILOGUE_TO_S8 ? 1 : 4; }

/* B's panel from its values, `block` bytes per k block: as they are, or (gemm_s4) two blocks per byte. */
static void pack_b(const int8_t *w, size_t blocks, size_t block, int int4, int8_t *b) {
    if (!int4) {
        memcpy(b, w, blocks * block);
        return;
    }
    for (size_t t = 0; t < blocks / 2; t++) {
        for (size_t p = 0; p < block; p++) {
            unsigned lo = (unsigned)w[2 * t * block + p] & 0xFu, hi = (unsigned)w[(2 * t + 1) * block + p] & 0xFu;
            b[t * block + p] = (int8_t)(lo | hi << 4);
        }
    }
}

/* The kernel's tile for random panels of `blocks` k blocks against the scalar epilogue on the naive sums. */
static int check_tile(const isf_kernel *kern, const step_case *sc, size_t blocks, int round) {
    int int4 = isf_ops[kern->op].w_bits == 4;
    size_t vector_bytes = isf_kernel_vector_bytes(kern), kr = kern->kr;
    size_t mr = isf_kernel_mr(kern, vector_bytes), nr = isf_kernel_nr(kern, vector_bytes);
    size_t a_bytes = (blocks * mr * kr + 63) / 64 * 64, b_bytes = (blocks * nr * kr + 63) / 64 * 64;
    int8_t *a = aligned_alloc(64, a_bytes ? a_bytes : 64), *b = aligned_alloc(64, b_bytes ? b_bytes : 64);
    size_t ldc = nr + PAD, out = out_bytes(sc->steps), c_bytes = mr * ldc * out;
    unsigned char *got = malloc(c_bytes + 2 * GUARD), *want = malloc(c_bytes);
    params *p = malloc(sizeof *p);
    if (a == NULL || b == NULL || got == NULL || want == NULL || p == NULL || nr > MAX_NR || mr > MAX_MR) {
        free(a), free(b), free(got), free(want), free(p);
        return 0;
    }
    for (size_t i = 0; i < blocks * mr * kr; i++) {
        a[i] = random_s8();
    }
    int8_t *w = malloc(blocks * nr * kr + 1); /* B's values; b holds them as the kernel reads them */
    if (w == NULL) {
        free(a), free(b), free(got), free(want), free(p);
        return 0;
    }
    for (size_t i = 0; i < blocks * nr * kr; i++) {
        w[i] = int4 ? (int8_t)((int)(next_random() & 0xF) - 8) : random_s8();
    }
    pack_b(w, blocks, nr * kr, int4, b);
    isf_epilogue ep = draw(sc, p, mr, nr, round);
    memset(got, FILL, c_bytes + 2 * GUARD);
    memcpy(want, got + GUARD, c_bytes);
    kern->fn(blocks, a, b, got + GUARD, ldc, 0, &ep);
    int small = 1; /* SMALL_SUMS' promise holds for every sum of the case */
    for (size_t i = 0; i < mr; i++) {
        for (size_t j = 0; j < nr; j++) {
            int32_t sum = 0;
            for (size_t kb = 0; kb < blocks; kb++) {
                for (size_t x = 0; x < kr; x++) {
                    sum += (int32_t)a[(kb * mr + i) * kr + x] * (int32_t)w[(kb * nr + j) * kr + x];
                }
            }
            uint32_t r =
                (uint32_t)sum + (sc->steps & ISF_EPILOGUE_PARTIAL ? (uint32_t)p->partial[i * ep.partial_ld + j] : 0u);
            isf_epilogue_store_s32(&ep, (int32_t)r, i, j, want, ldc);
            int64_t converted =
                (int32_t)r +
                (sc->steps & ISF_EPILOGUE_ROW_OFFSET ? (int64_t)p->row_offset[i] * (int64_t)p->col_sum[j] : 0);
            small &= !(sc->steps & ISF_EPILOGUE_SMALL_SUMS) || (converted >= -(1 << 22) && converted < (1 << 22));
        }
    }
    if (!small) {
        fprintf(stderr, "%s %s, %zu blocks: a sum outside SMALL_SUMS' range (the case's draws)\n", kern->name, sc->name,
                blocks);
    }
    int same = memcmp(got + GUARD, want, c_bytes) == 0;
    int guarded = all_bytes(got, GUARD, FILL) && all_bytes(got + GUARD + c_bytes, GUARD, FILL);
    if (!same || !guarded) {
        fprintf(stderr, "%s %s, %zu blocks, round %d: %s, %s\n", kern->name, sc->name, blocks, round,
                same ? "same bytes" : "DIFFERENT bytes", guarded ? "guards intact" : "wrote outside the tile");
    }
    free(a), free(b), free(w), free(got), free(want), free(p);
    return same && guarded && small;
}

/* argv[1], when given: only the kernels whose name contains it. */
int main(int argc, char **argv) {
    const isf_selection *sel = isf_selection_enter();
    uint32_t active = sel->active;
    isf_selection_leave(sel);
    size_t ran = 0;
    static const size_t block_counts[] = {1, 2, 3, 7, 8, 9, 33};
    for (size_t t = 0; t < isf_kernel_table_count; t++) {
        const isf_kernel *kern = &isf_kernel_table[t];
        if ((kern->op != ISF_OP_GEMM_S8 && kern->op != ISF_OP_GEMM_S4) ||
            (argc > 1 && strstr(kern->name, argv[1]) == NULL)) {
            continue;
        }
        if ((kern->required & ~active) != 0) {
            printf("%s not runnable here\n", kern->name);
            continue;
        }
        int ok = 1;
        for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++) {
            for (size_t bc = 0; bc < sizeof block_counts / sizeof block_counts[0]; bc++) {
                for (int round = 0; round < 4; round++) {
                    size_t blocks = block_counts[bc] * (kern->op == ISF_OP_GEMM_S4 ? 2 : 1); /* whole pairs */
                    int one = check_tile(kern, &cases[s], blocks, round);
                    CHECK(one);
                    ok &= one;
                }
            }
        }
        printf("%s: epilogue %s\n", kern->name, ok ? "checked" : "WRONG");
        isf_trace_ran(t); /* it ran, called directly: isaforge test-qemu counts gemm_s4's kernels here */
        ran++;
    }
    CHECK(ran > 0);
    return finish();
}
