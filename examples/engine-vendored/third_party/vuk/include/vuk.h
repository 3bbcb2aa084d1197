/* vuk: a small micro-kernel library laid out and named the way upstream ones are (its own prefix, one folder per
 * kernel family, an interface struct of several functions per kernel, assembly companions, kernels tuned for one
 * core, kernels needing two architecture features). It is vendored unmodified by the engine in ../../: nothing in
 * this tree knows isaforge. */
#ifndef VUK_H
#define VUK_H

#include <stddef.h>
#include <stdint.h>

/* fp32 matrix product with clamp: dst[m][n] = clamp(lhs[m][k] · rhs[k][n] + bias[n]). The RHS (weights) is packed
 * once by vuk_rhs_pack_f32p8: panels of 8 columns, each its 8 bias values then k rows of 8 (zeros past n). */
typedef struct {
    size_t (*get_mr)(void);
    size_t (*get_nr)(void);
    size_t (*get_kr)(void);
    void (*run_matmul)(size_t m, size_t n, size_t k, const float *lhs, size_t lhs_stride, const void *rhs_packed,
                       float *dst, size_t dst_stride, float clamp_min, float clamp_max);
} vuk_matmul_clamp_f32_f32p8_ukernel;

size_t vuk_rhs_packed_size_f32p8(size_t n, size_t k);
void vuk_rhs_pack_f32p8(size_t n, size_t k, const float *rhs, size_t rhs_stride, const float *bias, void *rhs_packed);

#endif
