/* The NEON packer families: vectorised loops that fill the full k blocks of one panel of a layout (A: one full MR-row
 * panel; B: columns [0, w) of one NR-column panel, w ≤ NR). Codegen instantiates them per layout of the registry
 * ([layout] in src/isaforge/isa.toml, "neon:<family>") with the layout's NR as a constant, into a generated source
 * that Meson compiles into the neon variant's library with its flags, so check-isolation checks them as it does the
 * kernels. One header for both arches: the families use AArch64-only instructions where they help, behind
 * __aarch64__, and some exist on one arch only. Every family is ISF_INLINE: its instantiation is one function.
 * The portable loop of kernels/runtime/pack.c does the rest of a panel (edges, the last partial k block, padding).
 * Fixed-size copies inline; an edge panel's row of another size is one memcpy. */
#ifndef ISAFORGE_PACK_NEON_H
#define ISAFORGE_PACK_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#include "isf_half.h"
#include "isf_internal.h"
#include "isf_widen.h"

static inline void copy2(unsigned char *d, const unsigned char *s) { memcpy(d, s, 2); }
static inline void copy4(unsigned char *d, const unsigned char *s) { memcpy(d, s, 4); }
static inline void copy16(unsigned char *d, const unsigned char *s) { memcpy(d, s, 16); }

/* ---- NEON: A ----------------------------------------------------------------------------------------------- */
/*
 * A panel [k block][MR rows][G bytes] from MR rows: a transpose of G-byte groups. Each row gives whole registers of
 * consecutive groups; zip pairs rows (i and i + 1, or i and i + 4), and an st4 interleaves four such registers into
 * whole k blocks. (ld4 single-lane gathers would need fewer instructions with clang, but GCC 12 routes their register
 * tuples through the stack.) MR is 8 or 4, as for every kernel of the catalogue; other MR take the portable loop, and
 * AArch32 shapes without a 4-row st4 copy group by group.
 */
static inline void copy8(unsigned char *d, const unsigned char *s) { memcpy(d, s, 8); }

/* At any address: 32-bit lane loads of NEON intrinsics may dereference a uint32_t pointer (GCC's do), which int8
 * rows need not align. The compilers still emit one ldr s or ld1 lane load. Wider loads go through bytes (ld1 .16b)
 * and reinterpret, for the same reason. */
static inline uint32_t load_u32(const unsigned char *p) {
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

#define U16P(p) ((const uint16_t *)(const void *)(p))
#define OUT16(p) ((uint16_t *)(void *)(p))
#define OUT32(p) ((uint32_t *)(void *)(p))
#define OUT64(p) ((uint64_t *)(void *)(p))

/* Leftover k blocks, one G-byte group of each of the MR rows at a time. */
#define A_TAIL(copy, g, mr)                                     \
    for (; blocks > 0; blocks--, a += (g), out += (mr) * (g)) { \
        for (size_t r = 0; r < (mr); r++) {                     \
            copy(out + r * (g), a + r * lda_b);                 \
        }                                                       \
    }

#if defined(__aarch64__)
/* MR = 8, 32 bytes of each row at a time: an ld1 of two registers takes only a base register (post-incremented), so
 * each row has its own pointer. The empty asm "may change" them: otherwise the compilers rebuild all eight from one
 * induction variable with an add per row and iteration. It emits no instruction. */
#define ROW_POINTERS8(a, ld)                                                                           \
    const unsigned char *p0 = (a), *p1 = p0 + (ld), *p2 = p1 + (ld), *p3 = p2 + (ld), *p4 = p3 + (ld); \
    const unsigned char *p5 = p4 + (ld), *p6 = p5 + (ld), *p7 = p6 + (ld)
/* r[i].val[h]: bytes 16h … 16h + 15 of row i (an ld1 of two registers, post-incremented). */
#define LOAD_ROW(r, i) (r[i] = vld1q_u8_x2(p##i), p##i += 32)
#define LOAD_ROWS8(r)                                               \
    uint8x16x2_t r[8];                                              \
    LOAD_ROW(r, 0), LOAD_ROW(r, 1), LOAD_ROW(r, 2), LOAD_ROW(r, 3); \
    LOAD_ROW(r, 4), LOAD_ROW(r, 5), LOAD_ROW(r, 6), LOAD_ROW(r, 7); \
    __asm__("" : "+r"(p0), "+r"(p1), "+r"(p2), "+r"(p3), "+r"(p4), "+r"(p5), "+r"(p6), "+r"(p7))
#endif

#if defined(__aarch64__)
/* 4-byte groups (fp32 with KR = 1, binary16/bfloat16 with KR = 2, int8 with KR = 4), MR a multiple of 4 known only
 * at run time (the streaming layouts', whose MR grows with the SVL): four rows by four k blocks at a time, transposed
 * in registers (trn of 32-bit, then of 64-bit lanes), each k block's 16 bytes stored a whole panel row (MR groups)
 * apart. */
ISF_INLINE void a_g4_rows(const unsigned char *a, size_t lda_b, size_t blocks, size_t mr, unsigned char *out) {
    size_t block_bytes = mr * 4, whole = blocks / 4 * 4;
    for (size_t r = 0; r < mr; r += 4) {
        const unsigned char *s = a + r * lda_b;
        unsigned char *d = out + r * 4;
        for (size_t b = 0; b < whole; b += 4, s += 16, d += 4 * block_bytes) {
            uint32x4_t r0 = vreinterpretq_u32_u8(vld1q_u8(s)), r1 = vreinterpretq_u32_u8(vld1q_u8(s + lda_b));
            uint32x4_t r2 = vreinterpretq_u32_u8(vld1q_u8(s + 2 * lda_b));
            uint32x4_t r3 = vreinterpretq_u32_u8(vld1q_u8(s + 3 * lda_b));
            uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1)), t1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
            uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3)), t3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
            vst1q_u8(d, vreinterpretq_u8_u64(vtrn1q_u64(t0, t2)));
            vst1q_u8(d + block_bytes, vreinterpretq_u8_u64(vtrn1q_u64(t1, t3)));
            vst1q_u8(d + 2 * block_bytes, vreinterpretq_u8_u64(vtrn2q_u64(t0, t2)));
            vst1q_u8(d + 3 * block_bytes, vreinterpretq_u8_u64(vtrn2q_u64(t1, t3)));
        }
        for (size_t b = whole; b < blocks; b++) {
            for (size_t y = 0; y < 4; y++) {
                copy4(out + b * block_bytes + (r + y) * 4, a + (r + y) * lda_b + b * 4);
            }
        }
    }
}
#endif

/* 4-byte groups (fp32 with KR = 1, int8 with KR = 4), MR = 8: zip rows 2i, 2i + 1, then st4 of 64-bit pairs. */
ISF_INLINE void a_g4_mr8(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
#if defined(__aarch64__)
    if (blocks >= 8) {
        ROW_POINTERS8(a, lda_b);
        for (; blocks >= 8; blocks -= 8) {
            LOAD_ROWS8(r);
            for (int h = 0; h < 2; h++) {
                uint64x2x4_t lo, hi;
                for (int i = 0; i < 4; i++) {
                    uint32x4_t x = vreinterpretq_u32_u8(r[2 * i].val[h]);
                    uint32x4_t y = vreinterpretq_u32_u8(r[2 * i + 1].val[h]);
                    lo.val[i] = vreinterpretq_u64_u32(vzip1q_u32(x, y));
                    hi.val[i] = vreinterpretq_u64_u32(vzip2q_u32(x, y));
                }
                vst4q_u64(OUT64(out), lo);
                vst4q_u64(OUT64(out + 64), hi);
                out += 128;
            }
        }
        a = p0;
    }
    for (; blocks >= 4; blocks -= 4, a += 16, out += 128) {
        uint32x4_t r[8];
        for (int i = 0; i < 8; i++) {
            r[i] = vreinterpretq_u32_u8(vld1q_u8(a + i * lda_b));
        }
        uint64x2x4_t lo, hi;
        for (int i = 0; i < 4; i++) {
            lo.val[i] = vreinterpretq_u64_u32(vzip1q_u32(r[2 * i], r[2 * i + 1]));
            hi.val[i] = vreinterpretq_u64_u32(vzip2q_u32(r[2 * i], r[2 * i + 1]));
        }
        vst4q_u64(OUT64(out), lo);
        vst4q_u64(OUT64(out + 64), hi);
    }
#endif
    A_TAIL(copy4, 4, 8)
}

/* 4-byte groups, MR = 4: st4 of the four rows is the transpose. */
ISF_INLINE void a_g4_mr4(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
    for (; blocks >= 4; blocks -= 4, a += 16, out += 64) {
        uint32x4x4_t v = {{vreinterpretq_u32_u8(vld1q_u8(a)), vreinterpretq_u32_u8(vld1q_u8(a + lda_b)),
                           vreinterpretq_u32_u8(vld1q_u8(a + 2 * lda_b)),
                           vreinterpretq_u32_u8(vld1q_u8(a + 3 * lda_b))}};
        vst4q_u32(OUT32(out), v);
    }
    A_TAIL(copy4, 4, 4)
}

/* 2-byte groups (binary16/bfloat16 with KR = 1), MR = 8: zip rows i, i + 4, then st4 of 16-bit lanes. */
ISF_INLINE void a_g2_mr8(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
#if defined(__aarch64__)
    if (blocks >= 16) {
        ROW_POINTERS8(a, lda_b);
        for (; blocks >= 16; blocks -= 16) {
            LOAD_ROWS8(r);
            for (int h = 0; h < 2; h++) {
                uint16x8x4_t lo, hi;
                for (int i = 0; i < 4; i++) {
                    uint16x8_t x = vreinterpretq_u16_u8(r[i].val[h]), y = vreinterpretq_u16_u8(r[i + 4].val[h]);
                    lo.val[i] = vzip1q_u16(x, y);
                    hi.val[i] = vzip2q_u16(x, y);
                }
                vst4q_u16(OUT16(out), lo);
                vst4q_u16(OUT16(out + 64), hi);
                out += 128;
            }
        }
        a = p0;
    }
    for (; blocks >= 8; blocks -= 8, a += 16, out += 128) {
        uint16x8_t r[8];
        for (int i = 0; i < 8; i++) {
            r[i] = vld1q_u16(U16P(a + i * lda_b));
        }
        uint16x8x4_t lo, hi;
        for (int i = 0; i < 4; i++) {
            lo.val[i] = vzip1q_u16(r[i], r[i + 4]);
            hi.val[i] = vzip2q_u16(r[i], r[i + 4]);
        }
        vst4q_u16(OUT16(out), lo);
        vst4q_u16(OUT16(out + 64), hi);
    }
    if (blocks >= 4) {
        uint16x8_t r[8];
        for (int i = 0; i < 8; i++) {
            r[i] = vcombine_u16(vld1_u16(U16P(a + i * lda_b)), vdup_n_u16(0));
        }
        uint16x8x4_t lo;
        for (int i = 0; i < 4; i++) {
            lo.val[i] = vzip1q_u16(r[i], r[i + 4]);
        }
        vst4q_u16(OUT16(out), lo);
        blocks -= 4, a += 8, out += 64;
    }
#endif
    A_TAIL(copy2, 2, 8)
}

/* 2-byte groups, MR = 4: st4 of the four rows. */
ISF_INLINE void a_g2_mr4(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
    for (; blocks >= 4; blocks -= 4, a += 8, out += 32) {
        uint16x4x4_t v = {{vld1_u16(U16P(a)), vld1_u16(U16P(a + lda_b)), vld1_u16(U16P(a + 2 * lda_b)),
                           vld1_u16(U16P(a + 3 * lda_b))}};
        vst4_u16(OUT16(out), v);
    }
    A_TAIL(copy2, 2, 4)
}

#if defined(__aarch64__)
/* binary16/bfloat16 → fp32 with KR = 1, MR = 8: the 2-byte zips, widened, then st4 of 32-bit lanes. fcvtl obeys
 * FPCR exactly as the scalar fcvt of isf_f16_to_f32 does. */
ISF_INLINE uint32x4_t widen_lo(isf_pack_kind kind, uint16x8_t x) {
    return kind == ISF_PACK_F16_TO_F32 ? vreinterpretq_u32_f32(vcvt_f32_f16(vget_low_f16(vreinterpretq_f16_u16(x))))
                                       : vshll_n_u16(vget_low_u16(x), 16);
}

ISF_INLINE uint32x4_t widen_hi(isf_pack_kind kind, uint16x8_t x) {
    return kind == ISF_PACK_F16_TO_F32 ? vreinterpretq_u32_f32(vcvt_high_f32_f16(vreinterpretq_f16_u16(x)))
                                       : vshll_high_n_u16(x, 16);
}

/* k blocks 0-1 (lo) and 2-3 (hi) of four zipped row pairs. */
ISF_INLINE void store_widened(isf_pack_kind kind, const uint16x8_t z[4], unsigned char *out) {
    uint32x4x4_t lo, hi;
    for (int i = 0; i < 4; i++) {
        lo.val[i] = widen_lo(kind, z[i]);
        hi.val[i] = widen_hi(kind, z[i]);
    }
    vst4q_u32(OUT32(out), lo);
    vst4q_u32(OUT32(out + 64), hi);
}

ISF_INLINE void a_widen_mr8(isf_pack_kind kind, const unsigned char *a, size_t lda_b, size_t blocks,
                            unsigned char *out) {
    for (; blocks >= 8; blocks -= 8, a += 16, out += 256) {
        uint16x8_t r[8], lo[4], hi[4];
        for (int i = 0; i < 8; i++) {
            r[i] = vld1q_u16(U16P(a + i * lda_b));
        }
        for (int i = 0; i < 4; i++) {
            lo[i] = vzip1q_u16(r[i], r[i + 4]);
            hi[i] = vzip2q_u16(r[i], r[i + 4]);
        }
        store_widened(kind, lo, out);
        store_widened(kind, hi, out + 128);
    }
    if (blocks >= 4) {
        uint16x8_t r[8], lo[4];
        for (int i = 0; i < 8; i++) {
            r[i] = vcombine_u16(vld1_u16(U16P(a + i * lda_b)), vdup_n_u16(0));
        }
        for (int i = 0; i < 4; i++) {
            lo[i] = vzip1q_u16(r[i], r[i + 4]);
        }
        store_widened(kind, lo, out);
        blocks -= 4, a += 8, out += 128;
    }
    for (; blocks > 0; blocks--, a += 2, out += 32) {
        for (size_t r = 0; r < 8; r++) {
            widen(kind, out + 4 * r, a + r * lda_b, 1);
        }
    }
}
#endif

/* bfloat16 → fp32 with KR = 1, MR = 4 (AArch32's fp32 kernel, AArch64's 4x8 tail of gemm_f32_8x8_neon: one layout,
 * bf16>f32.4x8x1, on both arches): rows shifted to fp32, then st4 of the four. */
ISF_INLINE void a_widen_bf16_mr4(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
    for (; blocks >= 4; blocks -= 4, a += 8, out += 64) {
        uint32x4x4_t v = {{vshll_n_u16(vld1_u16(U16P(a)), 16), vshll_n_u16(vld1_u16(U16P(a + lda_b)), 16),
                           vshll_n_u16(vld1_u16(U16P(a + 2 * lda_b)), 16),
                           vshll_n_u16(vld1_u16(U16P(a + 3 * lda_b)), 16)}};
        vst4q_u32(OUT32(out), v);
    }
    for (; blocks > 0; blocks--, a += 2, out += 16) {
        for (size_t r = 0; r < 4; r++) {
            widen(ISF_PACK_BF16_TO_F32, out + 4 * r, a + r * lda_b, 1);
        }
    }
}

/* 8-byte groups (int8 with KR = 8, bfloat16 with KR = 4): a row register holds 2 groups; zip of 64-bit lanes pairs
 * rows, and for MR = 8 an st4 of 64-bit lanes writes 2 whole k blocks. AArch32 copies group by group. */
ISF_INLINE void a_g8_mr8(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
#if defined(__aarch64__) && defined(__clang__)
    /* Clang: no zips at all. Rows 0-3 (and 4-7) sit in four consecutive registers straight from their loads, and an
     * st4 of one 64-bit lane writes those rows of one k block: 8 ldp and 8 st4 per 4 k blocks. (Clang turns the zip1
     * of 64-bit lanes below into two instructions; GCC 12 copies the registers of st4 tuples used twice.) */
    if (blocks >= 4) {
        ROW_POINTERS8(a, lda_b);
        for (; blocks >= 4; blocks -= 4) {
            uint64x2x4_t lo[2], hi[2]; /* [h]: k blocks 2h, 2h + 1 of rows 0-3 (lo) and 4-7 (hi) */
            for (int h = 0; h < 2; h++) {
                lo[h].val[0] = vreinterpretq_u64_u8(vld1q_u8(p0 + 16 * h));
                lo[h].val[1] = vreinterpretq_u64_u8(vld1q_u8(p1 + 16 * h));
                lo[h].val[2] = vreinterpretq_u64_u8(vld1q_u8(p2 + 16 * h));
                lo[h].val[3] = vreinterpretq_u64_u8(vld1q_u8(p3 + 16 * h));
                hi[h].val[0] = vreinterpretq_u64_u8(vld1q_u8(p4 + 16 * h));
                hi[h].val[1] = vreinterpretq_u64_u8(vld1q_u8(p5 + 16 * h));
                hi[h].val[2] = vreinterpretq_u64_u8(vld1q_u8(p6 + 16 * h));
                hi[h].val[3] = vreinterpretq_u64_u8(vld1q_u8(p7 + 16 * h));
            }
            p0 += 32, p1 += 32, p2 += 32, p3 += 32, p4 += 32, p5 += 32, p6 += 32, p7 += 32;
            __asm__("" : "+r"(p0), "+r"(p1), "+r"(p2), "+r"(p3), "+r"(p4), "+r"(p5), "+r"(p6), "+r"(p7));
            for (int h = 0; h < 2; h++) { /* each store post-increments out (the asm keeps them from being folded) */
                vst4q_lane_u64(OUT64(out), lo[h], 0);
                out += 32;
                __asm__("" : "+r"(out));
                vst4q_lane_u64(OUT64(out), hi[h], 0);
                out += 32;
                __asm__("" : "+r"(out));
                vst4q_lane_u64(OUT64(out), lo[h], 1);
                out += 32;
                __asm__("" : "+r"(out));
                vst4q_lane_u64(OUT64(out), hi[h], 1);
                out += 32;
                __asm__("" : "+r"(out));
            }
        }
        a = p0;
    }
#elif defined(__aarch64__)
    if (blocks >= 4) {
        ROW_POINTERS8(a, lda_b);
        for (; blocks >= 4; blocks -= 4) {
            LOAD_ROWS8(r);
            for (int h = 0; h < 2; h++) {
                uint64x2x4_t lo, hi;
                for (int i = 0; i < 4; i++) {
                    uint64x2_t x = vreinterpretq_u64_u8(r[i].val[h]), y = vreinterpretq_u64_u8(r[i + 4].val[h]);
                    lo.val[i] = vzip1q_u64(x, y);
                    hi.val[i] = vzip2q_u64(x, y);
                }
                vst4q_u64(OUT64(out), lo);
                vst4q_u64(OUT64(out + 64), hi);
                out += 128;
            }
        }
        a = p0;
    }
#endif
#if defined(__aarch64__)
    for (; blocks >= 2; blocks -= 2, a += 16, out += 128) {
        uint64x2_t r[8];
        for (int i = 0; i < 8; i++) {
            r[i] = vreinterpretq_u64_u8(vld1q_u8(a + i * lda_b));
        }
        uint64x2x4_t lo, hi;
        for (int i = 0; i < 4; i++) {
            lo.val[i] = vzip1q_u64(r[i], r[i + 4]);
            hi.val[i] = vzip2q_u64(r[i], r[i + 4]);
        }
        vst4q_u64(OUT64(out), lo);
        vst4q_u64(OUT64(out + 64), hi);
    }
#endif
    A_TAIL(copy8, 8, 8)
}

ISF_INLINE void a_g8_mr4(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
#if defined(__aarch64__)
    for (; blocks >= 2; blocks -= 2, a += 16, out += 64) {
        uint64x2_t r0 = vreinterpretq_u64_u8(vld1q_u8(a)), r1 = vreinterpretq_u64_u8(vld1q_u8(a + lda_b));
        uint64x2_t r2 = vreinterpretq_u64_u8(vld1q_u8(a + 2 * lda_b));
        uint64x2_t r3 = vreinterpretq_u64_u8(vld1q_u8(a + 3 * lda_b));
        vst1q_u8(out, vreinterpretq_u8_u64(vzip1q_u64(r0, r1)));
        vst1q_u8(out + 16, vreinterpretq_u8_u64(vzip1q_u64(r2, r3)));
        vst1q_u8(out + 32, vreinterpretq_u8_u64(vzip2q_u64(r0, r1)));
        vst1q_u8(out + 48, vreinterpretq_u8_u64(vzip2q_u64(r2, r3)));
    }
#endif
    A_TAIL(copy8, 8, 4)
}

/* 16-byte groups (int8 with KR = 16). */
ISF_INLINE void a_g16_mr4(const unsigned char *a, size_t lda_b, size_t blocks,
                          unsigned char *out){A_TAIL(copy16, 16, 4)}

/* ---- NEON: B ----------------------------------------------------------------------------------------------- */
/*
 * B panel [k block][NR columns][KR]: KR = 1 copies rows; KR > 1 interleaves KR rows column by column, which is what
 * st4 does for 4 registers (KR = 4: one register per row) and, after zipping rows r and r + 4, for 8 (KR = 8).
 * Every routine packs the full k blocks of columns [0, w); for an edge panel (w < NR) the caller zeroes the panel
 * first. w and NR are constants at the call sites that matter, so the column loops fold.
 */

/* Row pointers p0 … p<n-1> of n consecutive rows of B, and their step to the next k block, taken only when one
 * follows (STEP_IF). Each pointer stays inside B: past the last block, or set for a block there is none of (the
 * routines return first), it would leave B (undefined; on 32-bit Arm, with a leading dimension near 2^29 bytes, 8
 * rows' span wraps the address space). */
#define ROWS4(b, ld) const unsigned char *p0 = (b), *p1 = p0 + (ld), *p2 = p1 + (ld), *p3 = p2 + (ld)
#define ROWS8(b, ld) \
    ROWS4(b, ld);    \
    const unsigned char *p4 = p3 + (ld), *p5 = p4 + (ld), *p6 = p5 + (ld), *p7 = p6 + (ld)
#define STEP4(n) (p0 += (n), p1 += (n), p2 += (n), p3 += (n))
#define STEP8(n) (STEP4(n), p4 += (n), p5 += (n), p6 += (n), p7 += (n))
#define STEP_IF(more, step) ((void)((more) && ((step), 1)))

/* KR = 1, no conversion: rows of n bytes in panel rows of `row` bytes. n is a constant for full panels; for an edge
 * panel the common sizes take two possibly overlapping copies per row, chosen once. */
ISF_INLINE void b_rows(const unsigned char *b, size_t ldb_b, size_t rows, size_t n, size_t row, unsigned char *out) {
#if defined(__aarch64__)
    /* Whole panel rows of 32 or 48 bytes (8 or 12 fp32, 16 or 24 binary16): one ld1 and one st1 of 2 or 3 registers.
     * The copy is store-bound: inlined, memcpy's stp + str of q registers take 4.5 modeled cycles a 48-byte row on
     * Neoverse N1 where st1 takes 3.0, and 3.0 a 32-byte row where st1 takes 2.0 (N2: 2.0 and 1.4; llvm-mca-19).
     * Cortex-A55 is the one core modeled slower (11 → 14 and 8 → 11 cycles). 64 bytes stays with ldp and stp. */
    if (n == row && n == 48) {
        for (; rows > 0; rows--, b += ldb_b, out += row) {
            vst1q_u8_x3(out, vld1q_u8_x3(b));
        }
        return;
    }
    if (n == row && n == 32) {
        for (; rows > 0; rows--, b += ldb_b, out += row) {
            vst1q_u8_x2(out, vld1q_u8_x2(b));
        }
        return;
    }
    if (n >= 32 && n <= 64 && n != row) {
        for (; rows > 0; rows--, b += ldb_b, out += row) {
            uint8x16x2_t x = vld1q_u8_x2(b), y = vld1q_u8_x2(b + n - 32);
            vst1q_u8_x2(out, x);
            vst1q_u8_x2(out + n - 32, y);
        }
        return;
    }
    if (n >= 16 && n < 32 && n != row) {
        for (; rows > 0; rows--, b += ldb_b, out += row) {
            uint8x16_t x = vld1q_u8(b), y = vld1q_u8(b + n - 16);
            vst1q_u8(out, x);
            vst1q_u8(out + n - 16, y);
        }
        return;
    }
#endif
    for (; rows > 0; rows--, b += ldb_b, out += row) {
        memcpy(out, b, n);
    }
}

/* KR = 1, widened: rows of w binary16/bfloat16 values in panel rows of nr fp32 values. */
ISF_INLINE void b_rows_widen(isf_pack_kind kind, const unsigned char *b, size_t ldb_b, size_t rows, size_t w, size_t nr,
                             unsigned char *out) {
    for (; rows > 0; rows--, b += ldb_b, out += 4 * nr) {
        widen(kind, out, b, w);
    }
}

#if defined(__aarch64__)
/* Transposes of 4 rows × 4 (KR = 4, bytes) or 4 rows × 2 (KR = 4, halves) gathered into one register. */
static const uint8_t TBL_4X4_B8[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
static const uint8_t TBL_4X2_B16[16] = {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15};

/* 4 bytes (4 int8 columns or 2 bfloat16 columns) of rows p0 … p3, one 32-bit lane each, transposed. */
ISF_INLINE uint8x16_t gather4(const unsigned char *p0, const unsigned char *p1, const unsigned char *p2,
                              const unsigned char *p3, uint8x16_t tbl) {
    uint32x4_t x = vdupq_n_u32(load_u32(p0));
    x = vsetq_lane_u32(load_u32(p1), x, 1);
    x = vsetq_lane_u32(load_u32(p2), x, 2);
    x = vsetq_lane_u32(load_u32(p3), x, 3);
    return vqtbl1q_u8(vreinterpretq_u8_u32(x), tbl);
}
#endif

/* KR = 4, int8 (sdot kernels). */
ISF_INLINE void b_k4_b8(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr, unsigned char *out) {
#if defined(__aarch64__)
    uint8x16_t tbl = vld1q_u8(TBL_4X4_B8);
#endif
    if (blocks == 0) {
        return;
    }
    ROWS4(b, ldb_b);
    for (; blocks > 0; out += 4 * nr, STEP_IF(blocks > 1, STEP4(4 * ldb_b)), blocks--) {
        unsigned char *d = out;
        size_t j = 0;
        for (; j + 16 <= w; j += 16, d += 64) {
            uint8x16x4_t v = {{vld1q_u8(p0 + j), vld1q_u8(p1 + j), vld1q_u8(p2 + j), vld1q_u8(p3 + j)}};
            vst4q_u8(d, v);
        }
        if (j + 8 <= w) {
            uint8x8x4_t v = {{vld1_u8(p0 + j), vld1_u8(p1 + j), vld1_u8(p2 + j), vld1_u8(p3 + j)}};
            vst4_u8(d, v);
            j += 8, d += 32;
        }
#if defined(__aarch64__)
        if (j + 4 <= w) {
            vst1q_u8(d, gather4(p0 + j, p1 + j, p2 + j, p3 + j, tbl));
            j += 4, d += 16;
        }
#endif
        for (; j < w; j++, d += 4) {
            d[0] = p0[j], d[1] = p1[j], d[2] = p2[j], d[3] = p3[j];
        }
    }
}

/* KR = 4, bfloat16 (bfmmla kernels). */
ISF_INLINE void b_k4_b16(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr, unsigned char *out) {
#if defined(__aarch64__)
    uint8x16_t tbl = vld1q_u8(TBL_4X2_B16);
#endif
    if (blocks == 0) {
        return;
    }
    ROWS4(b, ldb_b);
    for (; blocks > 0; out += 8 * nr, STEP_IF(blocks > 1, STEP4(4 * ldb_b)), blocks--) {
        unsigned char *d = out;
        size_t j = 0;
        for (; j + 8 <= w; j += 8, d += 64) {
            uint16x8x4_t v = {{vld1q_u16(U16P(p0 + 2 * j)), vld1q_u16(U16P(p1 + 2 * j)), vld1q_u16(U16P(p2 + 2 * j)),
                               vld1q_u16(U16P(p3 + 2 * j))}};
            vst4q_u16((uint16_t *)(void *)d, v);
        }
        if (j + 4 <= w) {
            uint16x4x4_t v = {{vld1_u16(U16P(p0 + 2 * j)), vld1_u16(U16P(p1 + 2 * j)), vld1_u16(U16P(p2 + 2 * j)),
                               vld1_u16(U16P(p3 + 2 * j))}};
            vst4_u16((uint16_t *)(void *)d, v);
            j += 4, d += 32;
        }
#if defined(__aarch64__)
        if (j + 2 <= w) {
            vst1q_u8(d, gather4(p0 + 2 * j, p1 + 2 * j, p2 + 2 * j, p3 + 2 * j, tbl));
            j += 2, d += 16;
        }
#endif
        for (; j < w; j++, d += 8) {
            copy2(d, p0 + 2 * j), copy2(d + 2, p1 + 2 * j), copy2(d + 4, p2 + 2 * j), copy2(d + 6, p3 + 2 * j);
        }
    }
}

/* KR = 8, int8 (smmla kernels): zip rows r and r + 4, then st4 puts each column's 8 bytes together. */
ISF_INLINE uint8x16_t zip_rows(uint8x8_t x, uint8x8_t y) {
#if defined(__aarch64__)
    return vzip1q_u8(vcombine_u8(x, vdup_n_u8(0)), vcombine_u8(y, vdup_n_u8(0)));
#else
    uint8x8x2_t z = vzip_u8(x, y);
    return vcombine_u8(z.val[0], z.val[1]);
#endif
}

/* 4 bytes at any address in the low half. */
ISF_INLINE uint8x8_t load4_u8(const unsigned char *p) { return vreinterpret_u8_u32(vcreate_u32(load_u32(p))); }

/* The low 4 bytes of x and y interleaved. */
ISF_INLINE uint8x8_t zip_rows4(uint8x8_t x, uint8x8_t y) {
#if defined(__aarch64__)
    return vzip1_u8(x, y);
#else
    return vzip_u8(x, y).val[0];
#endif
}

ISF_INLINE void b_k8_b8(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr, unsigned char *out) {
    if (blocks == 0) {
        return;
    }
    ROWS8(b, ldb_b);
    for (; blocks > 0; out += 8 * nr, STEP_IF(blocks > 1, STEP8(8 * ldb_b)), blocks--) {
        unsigned char *d = out;
        size_t j = 0;
        for (; j + 8 <= w; j += 8, d += 64) {
            uint8x16x4_t v = {{zip_rows(vld1_u8(p0 + j), vld1_u8(p4 + j)), zip_rows(vld1_u8(p1 + j), vld1_u8(p5 + j)),
                               zip_rows(vld1_u8(p2 + j), vld1_u8(p6 + j)), zip_rows(vld1_u8(p3 + j), vld1_u8(p7 + j))}};
            vst4q_u8(d, v);
        }
        if (j + 4 <= w) {
            uint8x8x4_t v = {
                {zip_rows4(load4_u8(p0 + j), load4_u8(p4 + j)), zip_rows4(load4_u8(p1 + j), load4_u8(p5 + j)),
                 zip_rows4(load4_u8(p2 + j), load4_u8(p6 + j)), zip_rows4(load4_u8(p3 + j), load4_u8(p7 + j))}};
            vst4_u8(d, v);
            j += 4, d += 32;
        }
        for (; j < w; j++, d += 8) {
            d[0] = p0[j], d[1] = p1[j], d[2] = p2[j], d[3] = p3[j];
            d[4] = p4[j], d[5] = p5[j], d[6] = p6[j], d[7] = p7[j];
        }
    }
}

#if defined(__aarch64__)
/* KR = 16, int8 (the smull/sadalp kernel): ld4 single-lane loads put 4 columns of row r into lane r of 4 registers,
 * so after 16 rows register j is column j's 16 bytes. */
ISF_INLINE void b_k16_b8(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr, unsigned char *out) {
    for (; blocks > 0; out += 16 * nr, STEP_IF(blocks > 1, b += 16 * ldb_b), blocks--) {
        unsigned char *d = out;
        size_t j = 0;
        for (; j + 4 <= w; j += 4, d += 64) {
            const unsigned char *p = b + j;
            uint8x16x4_t v = vld4q_dup_u8(p);
#define ISF_LANE(l) (p += ldb_b, v = vld4q_lane_u8(p, v, l))
            ISF_LANE(1), ISF_LANE(2), ISF_LANE(3), ISF_LANE(4), ISF_LANE(5), ISF_LANE(6), ISF_LANE(7), ISF_LANE(8);
            ISF_LANE(9), ISF_LANE(10), ISF_LANE(11), ISF_LANE(12), ISF_LANE(13), ISF_LANE(14), ISF_LANE(15);
#undef ISF_LANE
            vst1q_u8_x4(d, v);
        }
        for (; j < w; j++, d += 16) {
            for (size_t i = 0; i < 16; i++) {
                d[i] = b[i * ldb_b + j];
            }
        }
    }
}
#endif

/* ---- families of one uniform shape each (the names of the registry) ------------------------------------------- */

#if defined(__aarch64__)
ISF_INLINE void a_widen_f16_mr8(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
    a_widen_mr8(ISF_PACK_F16_TO_F32, a, lda_b, blocks, out);
}

ISF_INLINE void a_widen_bf16_mr8(const unsigned char *a, size_t lda_b, size_t blocks, unsigned char *out) {
    a_widen_mr8(ISF_PACK_BF16_TO_F32, a, lda_b, blocks, out);
}
#endif

/* KR = 1 copies of 4-, 2- and 1-byte elements. */
ISF_INLINE void b_rows_b32(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr,
                           unsigned char *out) {
    b_rows(b, ldb_b, blocks, 4 * w, 4 * nr, out);
}

ISF_INLINE void b_rows_b16(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr,
                           unsigned char *out) {
    b_rows(b, ldb_b, blocks, 2 * w, 2 * nr, out);
}

ISF_INLINE void b_rows_b8(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr,
                          unsigned char *out) {
    b_rows(b, ldb_b, blocks, w, nr, out);
}

ISF_INLINE void b_rows_widen_f16(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr,
                                 unsigned char *out) {
    b_rows_widen(ISF_PACK_F16_TO_F32, b, ldb_b, blocks, w, nr, out);
}

ISF_INLINE void b_rows_widen_bf16(const unsigned char *b, size_t ldb_b, size_t blocks, size_t w, size_t nr,
                                  unsigned char *out) {
    b_rows_widen(ISF_PACK_BF16_TO_F32, b, ldb_b, blocks, w, nr, out);
}

#endif
