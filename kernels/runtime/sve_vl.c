/* The calling thread's SVE vector length. Linux sets it per thread (prctl PR_SVE_SET_VL), so the driver asks for it
 * on every call that runs a scalable kernel; cntb is one instruction, cheaper than the prctl system call. Built with
 * the flags of a scalable variant (meson.build), never at the baseline; the generated isf_sve_vector_bytes points
 * here when one is built. */
#include <arm_sve.h>

#include "isf_internal.h"

size_t isf_sve_read_vector_bytes(void) { return (size_t)svcntb(); }
