/* The same intrinsics on A32 NEON: this file builds the AArch64 kernel with the aarch32 variant's flags. */
#include "../../aarch64/fp16/clamp_f16_1x16_fp16.c"
