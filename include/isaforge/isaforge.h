/* libisaforge: Arm GEMM micro-kernels chosen at run time from the CPU's features. */
#ifndef ISAFORGE_ISAFORGE_H
#define ISAFORGE_ISAFORGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ISF_OK = 0, ISF_ERR_INVALID_ARG = 1, ISF_ERR_NO_MEMORY = 2, ISF_ERR_UNSUPPORTED = 3 } isf_status;
enum {
    ISF_FEATURE_NEON = 1u << 0,
    ISF_FEATURE_FP16 = 1u << 1,
    ISF_FEATURE_DOTPROD = 1u << 2,
    ISF_FEATURE_I8MM = 1u << 3,
    ISF_FEATURE_BF16 = 1u << 4,
    ISF_FEATURE_SVE = 1u << 5,
    ISF_FEATURE_SVE2 = 1u << 6,
    ISF_FEATURE_SVEI8MM = 1u << 7,
    ISF_FEATURE_SVEBF16 = 1u << 8
};
typedef enum { ISF_OP_GEMM_F32, ISF_OP_GEMM_F16, ISF_OP_GEMM_BF16, ISF_OP_GEMM_S8 } isf_op;

uint32_t isf_cpu_features(void);    /* detected on this CPU */
uint32_t isf_active_features(void); /* detected & allowed */
/* Cap: only removes features, and re-selects kernels. Returns once every call that started before it has finished:
 * from then on no call runs a kernel the cap excludes. Active features and kernels are one snapshot per call. */
isf_status isf_set_feature_mask(uint32_t allowed);
const char *isf_kernel_name(isf_op op); /* micro-kernel chosen now, e.g. "gemm_s8_8x8x8_i8mm" */

/* C[m×n] = A[m×k]·B[k×n], row-major, leading dimensions in elements; C is overwritten. */
isf_status isf_gemm_f32(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb, float *c,
                        size_t ldc);
isf_status isf_gemm_s8(size_t m, size_t n, size_t k, const int8_t *a, size_t lda, const int8_t *b, size_t ldb,
                       int32_t *c, size_t ldc);

/* IEEE binary16 in and out; accumulation precision documented per variant. */
isf_status isf_gemm_f16(size_t m, size_t n, size_t k, const uint16_t *a, size_t lda, const uint16_t *b, size_t ldb,
                        uint16_t *c, size_t ldc);
/* bfloat16 in, fp32 out. */
isf_status isf_gemm_bf16(size_t m, size_t n, size_t k, const uint16_t *a, size_t lda, const uint16_t *b, size_t ldb,
                         float *c, size_t ldc);
/* Pre-packed B (weights), packed once in the panel layout of the kernel selected at packing time.
 * isf_packed_b_size: bytes that every kernel of `op` this CPU can run (at the calling thread's SVE vector length)
 * fits in, so a cap changed between the two calls cannot make the buffer too small; 0 on bad input or overflow.
 * isf_pack_b writes at most `packed_bytes` bytes: a buffer too small for the kernel selected now is refused
 * (ISF_ERR_INVALID_ARG, nothing written). Changed before 1.0: isf_pack_b gained `packed_bytes`.
 *
 * Storable: the buffer is self-describing bytes, with no pointers in it. It may be written to disk and read or
 * mapped back, in another process, by another build or a later version of the library, on another CPU. Its first
 * 64 bytes are a header of little-endian fields: "ISFB" (u32 at 0), ISF_PACKED_B_VERSION (u32 at 4), op (u32 at
 * 8), layout id (u32 at 12), SVE vector length in bytes, 0 for a layout that does not scale (u32 at 16), n, k, Kc
 * and the offset of the panels (u64 at 24, 32, 40, 48), zeros to 64. The layout id names the panel format (element
 * types, tile, vector-length scaling; src/isaforge/isa.toml [layout]): derived from the format, never from a table
 * position, it means the same in every build and version until ISF_PACKED_B_VERSION changes. The panels start at
 * the first 64-byte boundary after the header in the address space that packed them: to read them in place,
 * keep that alignment (an aligned_alloc(64, …) buffer, or a mapping of the file from offset 0, puts them at 64);
 * at any other alignment isf_gemm_packed still works, copying each block to aligned scratch first.
 * isf_gemm_packed runs any kernel of `op` the active features allow that reads the buffer's layout at the calling
 * thread's vector length (the selected kernel if it does), with the buffer's Kc. It refuses, leaving C untouched:
 *   ISF_ERR_UNSUPPORTED  no such kernel here (another layout: packed on a CPU with other features, under another
 *                        cap, by a build with other kernels; or another SVE vector length): pack again;
 *   ISF_ERR_INVALID_ARG  not a buffer this version reads, or not for this call: bad magic, another format version,
 *                        nonzero padding, another op, n or k, a Kc of no whole k blocks, a panel offset outside the
 *                        64 bytes after the header. */
#define ISF_PACKED_B_VERSION 1u
size_t isf_packed_b_size(isf_op op, size_t n, size_t k);
isf_status isf_pack_b(isf_op op, size_t n, size_t k, const void *b, size_t ldb, void *packed, size_t packed_bytes);
isf_status isf_gemm_packed(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *packed_b,
                           void *c, size_t ldc);

#ifdef __cplusplus
}
#endif
#endif
