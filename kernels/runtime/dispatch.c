/* Kernel selection: detect once, apply the caps (ISAFORGE_DISABLE at start-up, isf_set_feature_mask later), and
 * pick per op the most preferred kernel whose required features are all active. Readers take no lock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "isf_internal.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/prctl.h>
#ifndef PR_SVE_GET_VL
#define PR_SVE_GET_VL 51
#define PR_SVE_VL_LEN_MASK 0xffff
#endif
#endif

enum { OP_COUNT = ISF_OP_GEMM_S8 + 1 };

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t select_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t detected;
static uint32_t env_allowed = UINT32_MAX;
static const char *source = "none";
static size_t sve_bytes;
static _Atomic uint32_t active;
static _Atomic(const isf_kernel_info *) selected[OP_COUNT];

static void report_unknown(const char *name, size_t len) {
    fprintf(stderr, "isaforge: ISAFORGE_DISABLE: unknown feature '%.*s' ignored (known:", (int)len, name);
    for (size_t i = 0; i < isf_feature_count; i++) {
        fprintf(stderr, " %s", isf_features[i].name);
    }
    fprintf(stderr, ")\n");
}

static const isf_kernel_info *best_kernel(isf_op op, uint32_t features) {
    const isf_kernel_info *best = NULL;
    for (size_t i = 0; i < isf_kernel_count; i++) {
        const isf_kernel_info *k = &isf_kernels[i];
        if (k->op == op && (k->required & ~features) == 0 && (best == NULL || k->rank > best->rank)) {
            best = k;
        }
    }
    return best;
}

static void select_kernels(uint32_t allowed) {
    uint32_t features = isf_close_features(detected & env_allowed & allowed);
    atomic_store(&active, features);
    for (int op = 0; op < OP_COUNT; op++) {
        atomic_store(&selected[op], best_kernel((isf_op)op, features));
    }
}

/* The SVE vector length, read without executing an SVE instruction (this file is compiled at the baseline). */
static size_t read_sve_vector_bytes(void) {
#if defined(__aarch64__) && defined(__linux__)
    int vl = prctl(PR_SVE_GET_VL, 0, 0, 0, 0);
    return vl < 0 ? 0 : (size_t)(vl & PR_SVE_VL_LEN_MASK);
#else
    return 0;
#endif
}

static void initialise(void) {
    detected = isf_detect_features(&source);
    if (detected & ISF_FEATURE_SVE) {
        sve_bytes = read_sve_vector_bytes();
        if (sve_bytes == 0 || sve_bytes % 16 != 0) {
            /* Scalable kernels cannot size their tiles: treat SVE as absent rather than guess. */
            detected = isf_close_features(detected & ~(uint32_t)ISF_FEATURE_SVE);
            sve_bytes = 0;
        }
    }
    const char *disable = getenv("ISAFORGE_DISABLE");
    if (disable != NULL) {
        env_allowed = ~isf_parse_feature_list(disable, report_unknown);
    }
    select_kernels(UINT32_MAX);
}

static void ensure_initialised(void) { pthread_once(&init_once, initialise); }

uint32_t isf_cpu_features(void) {
    ensure_initialised();
    return detected;
}

uint32_t isf_active_features(void) {
    ensure_initialised();
    return atomic_load(&active);
}

isf_status isf_set_feature_mask(uint32_t allowed) {
    ensure_initialised();
    pthread_mutex_lock(&select_lock);
    select_kernels(allowed);
    pthread_mutex_unlock(&select_lock);
    return ISF_OK;
}

const isf_kernel_info *isf_selected_kernel(isf_op op) {
    if ((unsigned)op >= OP_COUNT) {
        return NULL;
    }
    ensure_initialised();
    return atomic_load(&selected[op]);
}

const char *isf_kernel_name(isf_op op) {
    const isf_kernel_info *k = isf_selected_kernel(op);
    return k != NULL ? k->name : NULL;
}

size_t isf_vector_bytes(void) {
    ensure_initialised();
    return sve_bytes;
}

unsigned isf_kernel_nr(const isf_kernel_info *k) {
    return k->scalable ? k->nr * (unsigned)(isf_vector_bytes() / 16) : k->nr;
}

const char *isf_detect_source(void) {
    ensure_initialised();
    return source;
}
