/* libisaforge: Arm GEMM micro-kernels chosen at run time from the CPU's features. */
#ifndef ISAFORGE_ISAFORGE_H
#define ISAFORGE_ISAFORGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ISF_OK = 0, ISF_ERR_INVALID_ARG = 1, ISF_ERR_NO_MEMORY = 2, ISF_ERR_UNSUPPORTED = 3 } isf_status;
/* The catalogue's features, ops and typed functions (isf_gemm_f32, …), generated from src/isaforge/isa.toml. */
#include "isaforge_ops.h"

uint32_t isf_cpu_features(void);    /* detected on this CPU */
uint32_t isf_active_features(void); /* detected & allowed */
/* Cap: only removes features, and re-selects kernels. Returns once every call that started before it has finished:
 * from then on no call runs a kernel the cap excludes. Active features and kernels are one snapshot per call. */
isf_status isf_set_feature_mask(uint32_t allowed);
const char *isf_kernel_name(isf_op op); /* micro-kernel chosen now, e.g. "gemm_s8_8x8x8_i8mm" */
const char *isf_op_name(isf_op op);     /* "gemm_f32", …; NULL for an unknown op */

/* Every kernel of an op built into this library, most preferred first: what dispatch chooses from. */
typedef struct {
    const char *name;    /* e.g. "gemm_s8_8x8x8_i8mm": <op>_<dtype>_<MR>x<NR>[x<KR>]_<variant> */
    const char *variant; /* e.g. "i8mm" */
    unsigned mr, nr, kr; /* tile rows, columns (at 128-bit vectors when scalable) and k steps per block */
    int scalable;        /* NR grows with the SVE vector length */
    uint32_t required;   /* ISF_FEATURE_* bits it needs */
    int runnable;        /* its features are all active now */
} isf_kernel_desc;

size_t isf_kernel_count(isf_op op); /* 0 for an unknown op */
isf_status isf_kernel_info(isf_op op, size_t i, isf_kernel_desc *out);
/* Run `op` with the kernel of that name from now on (benchmarks, bisecting a numerical difference, an engine that
 * knows better); NULL restores the automatic choice. ISF_ERR_INVALID_ARG: no kernel of `op` has that name;
 * ISF_ERR_UNSUPPORTED: its features are not active (nothing changes). A cap set later that excludes it falls back
 * to the automatic choice while it lasts. At start-up, ISAFORGE_KERNELS=gemm_f32=<name>,gemm_s8=<name> does the
 * same; an unknown or unrunnable name there is reported on stderr and the automatic choice kept. Like caps, it
 * returns once every call that started before it has finished. */
isf_status isf_select_kernel(isf_op op, const char *name);

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
 *                        nonzero padding, another op, n or k, a Kc of no whole k blocks or above 65536, a panel
 *                        offset outside the 64 bytes after the header. */
#define ISF_PACKED_B_VERSION 1u
size_t isf_packed_b_size(isf_op op, size_t n, size_t k);
isf_status isf_pack_b(isf_op op, size_t n, size_t k, const void *b, size_t ldb, void *packed, size_t packed_bytes);
isf_status isf_gemm_packed(isf_op op, size_t m, size_t n, size_t k, const void *a, size_t lda, const void *packed_b,
                           void *c, size_t ldc);

#ifdef __cplusplus
}
#endif
#endif
