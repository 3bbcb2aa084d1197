/* ecm: a small engine on isaforge. Its ops (ecm_sumsq_s8, ecm_clamp_f16, and what the generated ecm_dispatch.h
 * declares to list and choose kernels) run the best kernel this CPU has; the functions below are the engine's own
 * code, compiled at the arch's baseline. */
#ifndef ECM_H
#define ECM_H

#include "ecm_dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mean of x[i]^2 (0 for n == 0). */
double ecm_mean_square_s8(const int8_t *x, size_t n);
/* y[i] = min(max(x[i], 0), 6) on binary16 bits; x == y allowed. */
void ecm_relu6_f16(const uint16_t *x, uint16_t *y, size_t n);

#ifdef __cplusplus
}
#endif
#endif
