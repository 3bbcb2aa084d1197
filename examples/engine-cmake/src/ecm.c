/* The engine's own code: plain C at the baseline (isaforge_add_kernel_library gives <target> the baseline flags),
 * calling the dispatched ops. */
#include "ecm.h"

enum { HALF_ZERO = 0x0000, HALF_SIX = 0x4600 };

double ecm_mean_square_s8(const int8_t *x, size_t n) { return n ? (double)ecm_sumsq_s8(x, n) / (double)n : 0.0; }

void ecm_relu6_f16(const uint16_t *x, uint16_t *y, size_t n) { ecm_clamp_f16(x, y, n, HALF_ZERO, HALF_SIX); }
