/* Kernel selection: detect once, apply the caps (ISAFORGE_DISABLE at start-up, isf_set_feature_mask later), and
 * pick per op the most preferred kernel whose required features are all active. Readers take no lock. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "isf_internal.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/prctl.h>
#ifndef PR_SVE_GET_VL
#define PR_SVE_GET_VL 51
#define PR_SVE_VL_LEN_MASK 0xffff
#endif
#endif

enum { OP_COUNT = ISF_OP_GEMM_S8 + 1 };

/*
 * The selection (active features and the kernel of every op) is published as one snapshot, in one of two slots, so
 * a reader never sees the features of one cap with the kernels of another. A call pins the slot it reads for its
 * whole duration (isf_selection_enter/leave); isf_set_feature_mask fills the other slot, publishes it, and waits
 * until every call that pinned the old slot has left it. So when it returns, no call in the process runs a kernel
 * the new cap excludes (a cap can work around an erratum), and a slot is never rewritten under a reader.
 */
typedef struct {
    isf_selection selection;
    atomic_uint readers;
} slot;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t detected;
static uint32_t env_allowed = UINT32_MAX;
static const char *source = "none";
static slot slots[2];
static atomic_uint current;

static void report_unknown(const char *name, size_t len) {
    fprintf(stderr, "isaforge: ISAFORGE_DISABLE: unknown feature '%.*s' ignored (known:", (int)len, name);
    for (size_t i = 0; i < isf_feature_count; i++) {
        fprintf(stderr, " %s", isf_features[i].name);
    }
    fprintf(stderr, ")\n");
}

const isf_kernel_info *isf_best_kernel(isf_op op, uint32_t features) {
    const isf_kernel_info *best = NULL;
    for (size_t i = 0; i < isf_kernel_count; i++) {
        const isf_kernel_info *k = &isf_kernels[i];
        if (k->op == op && (k->required & ~features) == 0 && (best == NULL || k->rank > best->rank)) {
            best = k;
        }
    }
    return best;
}

static void fill_selection(isf_selection *sel, uint32_t allowed) {
    sel->active = isf_close_features(detected & env_allowed & allowed);
    for (int op = 0; op < OP_COUNT; op++) {
        sel->kernel[op] = isf_best_kernel((isf_op)op, sel->active);
    }
}

/* Yields first, then sleeps a little longer each round: a running GEMM may take a while to leave. */
static void wait_for_readers(slot *s) {
    for (unsigned round = 0; atomic_load(&s->readers) != 0; round++) {
        if (round < 64) {
            sched_yield();
        } else {
            struct timespec pause = {0, round < 1024 ? 20000 : 1000000};
            nanosleep(&pause, NULL);
        }
    }
}

/* Caller holds publish_lock (or is the one-time initialiser). */
static void publish(uint32_t allowed) {
    unsigned old = atomic_load(&current), next = old ^ 1u;
    wait_for_readers(&slots[next]); /* only late readers that saw `next` current two publishes ago, leaving now */
    fill_selection(&slots[next].selection, allowed);
    atomic_store(&current, next);
    wait_for_readers(&slots[old]);
}

/* The SVE vector length of the calling thread, read without executing an SVE instruction (this file is compiled at
 * the baseline); used once, to decide whether scalable kernels can work at all. */
static size_t prctl_vector_bytes(void) {
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
        size_t bytes = prctl_vector_bytes();
        if (bytes == 0 || bytes % 16 != 0 || isf_sve_vector_bytes == NULL) {
            /* Scalable kernels could not size their tiles: treat SVE as absent rather than guess. */
            detected = isf_close_features(detected & ~(uint32_t)ISF_FEATURE_SVE);
        }
    }
    const char *disable = getenv("ISAFORGE_DISABLE");
    if (disable != NULL) {
        env_allowed = ~isf_parse_feature_list(disable, report_unknown);
    }
    fill_selection(&slots[0].selection, UINT32_MAX);
    atomic_store(&current, 0u);
}

static void ensure_initialised(void) { pthread_once(&init_once, initialise); }

const isf_selection *isf_selection_enter(void) {
    ensure_initialised();
    for (;;) {
        unsigned i = atomic_load(&current);
        atomic_fetch_add(&slots[i].readers, 1u);
        if (atomic_load(&current) == i) { /* still current after we pinned it: a publisher will wait for us */
            return &slots[i].selection;
        }
        atomic_fetch_sub(&slots[i].readers, 1u);
    }
}

void isf_selection_leave(const isf_selection *sel) {
    slot *s = (slot *)(void *)((unsigned char *)(uintptr_t)sel - offsetof(slot, selection));
    atomic_fetch_sub(&s->readers, 1u);
}

uint32_t isf_cpu_features(void) {
    ensure_initialised();
    return detected;
}

uint32_t isf_active_features(void) {
    const isf_selection *sel = isf_selection_enter();
    uint32_t active = sel->active;
    isf_selection_leave(sel);
    return active;
}

isf_status isf_set_feature_mask(uint32_t allowed) {
    ensure_initialised();
    pthread_mutex_lock(&publish_lock);
    publish(allowed);
    pthread_mutex_unlock(&publish_lock);
    return ISF_OK;
}

const isf_kernel_info *isf_selected_kernel(isf_op op) {
    if ((unsigned)op >= OP_COUNT) {
        return NULL;
    }
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel_info *k = sel->kernel[op];
    isf_selection_leave(sel);
    return k;
}

const char *isf_kernel_name(isf_op op) {
    const isf_kernel_info *k = isf_selected_kernel(op);
    return k != NULL ? k->name : NULL;
}

size_t isf_kernel_vector_bytes(const isf_kernel_info *k) { return k->scalable ? isf_sve_vector_bytes() : 0; }

unsigned isf_kernel_nr(const isf_kernel_info *k, size_t vector_bytes) {
    return k->scalable ? k->nr * (unsigned)(vector_bytes / 16) : k->nr;
}

const char *isf_detect_source(void) {
    ensure_initialised();
    return source;
}
