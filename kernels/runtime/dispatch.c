/* Kernel selection: detect once, apply the caps (ISAFORGE_DISABLE at start-up, isf_set_feature_mask later), and
 * pick per op the kernel chosen by name (ISAFORGE_KERNELS at start-up, isf_select_kernel later) while its features
 * are active, else the most preferred kernel whose required features are all active. Readers take no lock. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isf_internal.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/prctl.h>
#ifndef PR_SVE_GET_VL
#define PR_SVE_GET_VL 51
#define PR_SVE_VL_LEN_MASK 0xffff
#endif
#ifndef PR_SME_GET_VL /* Linux 5.19; bookworm's headers have it, older ones may not */
#define PR_SME_GET_VL 64
#endif
#endif

/*
 * The selection (active features and the kernel of every op) is published as one snapshot, in one of two slots, so
 * a reader never sees the features of one cap with the kernels of another. A call pins the slot it reads for its
 * whole duration (isf_selection_enter/leave); isf_set_feature_mask fills the other slot, publishes it, and waits
 * until every call that pinned the old slot has left it. So when it returns, no call in the process runs a kernel
 * the new cap excludes (a cap can work around an erratum), and a slot is never rewritten under a reader.
 * A thread that has a slot pinned (parallel_for of isf_gemm_run_parallel runs inside the call) would wait for itself:
 * the waiting calls count the pins of the calling thread and refuse instead. A pool thread the pinning thread waits
 * for has no pin of its own, so that wait stays invisible (isaforge.h says so).
 */
typedef struct {
    isf_selection selection;
    atomic_uint readers;
} slot;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t detected;
static uint32_t l1d_bytes; /* the cores' L1D, which Kc is planned for */
static uint32_t env_allowed = UINT32_MAX;
/* Written under publish_lock (or by the one-time initialiser), read by publish(). */
static uint32_t cap = UINT32_MAX;
static const isf_kernel *chosen[ISF_OP_COUNT]; /* by name; NULL: automatic */
static const char *source = "none";
static slot slots[2];
static atomic_uint current;
static _Thread_local unsigned pinned_here; /* selections this thread has entered and not left */

/* The table lists each op's kernels most preferred first: the first that fits is the best. */
const isf_kernel *isf_best_kernel(isf_op op, uint32_t features) {
    const isf_kernel *best = NULL;
    for (size_t i = 0; i < isf_kernel_table_count && best == NULL; i++) {
        const isf_kernel *k = &isf_kernel_table[i];
        best = k->op == op && (k->required & ~features) == 0 ? k : NULL;
    }
    return best;
}

static int runnable(const isf_kernel *k, uint32_t active) { return (k->required & ~active) == 0; }

static uint32_t active_under(uint32_t allowed) { return isf_close_features(detected & env_allowed & allowed); }

static void fill_selection(isf_selection *sel) {
    sel->active = active_under(cap);
    for (int op = 0; op < ISF_OP_COUNT; op++) {
        const isf_kernel *k = chosen[op];
        sel->named[op] = k != NULL && runnable(k, sel->active);
        sel->kernel[op] = sel->named[op] ? k : isf_best_kernel((isf_op)op, sel->active);
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

/* Caller holds publish_lock. */
static void publish(void) {
    unsigned old = atomic_load(&current), next = old ^ 1u;
    wait_for_readers(&slots[next]); /* only late readers that saw `next` current two publishes ago, leaving now */
    fill_selection(&slots[next].selection);
    atomic_store(&current, next);
    wait_for_readers(&slots[old]);
}

/* A vector length of the calling thread, read without executing an SVE or SME instruction (this file is compiled at
 * the baseline): `option` is PR_SVE_GET_VL or PR_SME_GET_VL. */
static size_t prctl_vector_bytes(int option) {
#if defined(__aarch64__) && defined(__linux__)
    int vl = prctl(option, 0, 0, 0, 0);
    return vl < 0 ? 0 : (size_t)(vl & 0xffff); /* PR_SVE_VL_LEN_MASK and PR_SME_VL_LEN_MASK alike */
#else
    (void)option;
    return 0;
#endif
}

#if defined(__aarch64__) && defined(__linux__)
#define ISF_SVE_VL PR_SVE_GET_VL
#define ISF_SME_VL PR_SME_GET_VL
#else
#define ISF_SVE_VL 0
#define ISF_SME_VL 0
#endif

size_t isf_sve_vector_length(void) {
    return (isf_cpu_features() & ISF_FEATURE_SVE) ? prctl_vector_bytes(ISF_SVE_VL) : 0;
}

size_t isf_streaming_vector_length(void) {
    return (isf_cpu_features() & ISF_FEATURE_SME) ? prctl_vector_bytes(ISF_SME_VL) : 0;
}

/* The kernel of `op` named by the first len bytes of name, or NULL. */
static const isf_kernel *kernel_named(isf_op op, const char *name, size_t len) {
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        const isf_kernel *k = &isf_kernel_table[i];
        if (k->op == op && strlen(k->name) == len && strncmp(k->name, name, len) == 0) {
            return k;
        }
    }
    return NULL;
}

static int op_named(const char *name, size_t len) {
    for (int op = 0; op < ISF_OP_COUNT; op++) {
        if (strlen(isf_ops[op].name) == len && strncmp(isf_ops[op].name, name, len) == 0) {
            return op;
        }
    }
    return -1;
}

static void report_kernels_of(isf_op op) {
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        if (isf_kernel_table[i].op == op && runnable(&isf_kernel_table[i], active_under(UINT32_MAX))) {
            fprintf(stderr, " %s", isf_kernel_table[i].name);
        }
    }
}

/* One <op>=<kernel> entry of ISAFORGE_KERNELS; anything wrong is one line on stderr, and the automatic choice stays. */
static void choose_entry(const char *entry, size_t len) {
    const char *eq = memchr(entry, '=', len);
    int op = eq != NULL ? op_named(entry, (size_t)(eq - entry)) : -1;
    if (op < 0) {
        fprintf(stderr, "isaforge: ISAFORGE_KERNELS: '%.*s' ignored: want <op>=<kernel>, op one of", (int)len, entry);
        for (int i = 0; i < ISF_OP_COUNT; i++) {
            fprintf(stderr, " %s", isf_ops[i].name);
        }
        fputc('\n', stderr);
        return;
    }
    const char *name = eq + 1;
    size_t name_len = len - (size_t)(name - entry);
    const isf_kernel *k = kernel_named((isf_op)op, name, name_len);
    if (k == NULL || !runnable(k, active_under(UINT32_MAX))) {
        fprintf(stderr,
                "isaforge: ISAFORGE_KERNELS: %s kernel '%.*s' %s; automatic choice kept (runnable:", isf_ops[op].name,
                (int)name_len, name, k == NULL ? "is not built" : "cannot run on this CPU");
        report_kernels_of((isf_op)op);
        fprintf(stderr, ")\n");
        return;
    }
    chosen[op] = k;
}

static void choose_from_env(const char *list) {
    while (*list != '\0') {
        size_t len = strcspn(list, ",");
        if (len > 0) {
            choose_entry(list, len);
        }
        list += len + (list[len] == ',');
    }
}

/* For `isaforge test-qemu`: the kernels the start-up features exclude, once (ISAFORGE_TRACE). */
static void trace_refused(uint32_t active) {
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        if (!runnable(&isf_kernel_table[i], active)) {
            isf_trace_kernel("refused", "isf", isf_kernel_table[i].name);
        }
    }
}

void isf_trace_ran(size_t i) {
    if (i < isf_kernel_table_count && !atomic_load_explicit(&isf_kernel_ran[i], memory_order_relaxed) &&
        !atomic_exchange(&isf_kernel_ran[i], 1)) {
        isf_trace_kernel("ran", "isf", isf_kernel_table[i].name);
    }
}

uint32_t isf_active_features_without(const char *env_var) {
    uint32_t active = isf_active_features();
    const char *list = env_var != NULL ? getenv(env_var) : NULL;
    return list != NULL ? isf_close_features(active & ~isf_parse_feature_list(list, env_var)) : active;
}

static void initialise(void) {
    detected = isf_detect_features(&source);
    l1d_bytes = isf_detect_l1d_bytes();
    if (detected & ISF_FEATURE_SVE) {
        size_t bytes = prctl_vector_bytes(ISF_SVE_VL);
        if (bytes == 0 || bytes % 16 != 0 || isf_sve_vector_bytes == NULL) {
            /* Scalable kernels could not size their tiles: treat SVE as absent rather than guess. */
            detected = isf_close_features(detected & ~(uint32_t)ISF_FEATURE_SVE);
        }
    }
    if (detected & ISF_FEATURE_SME) {
        size_t bytes = prctl_vector_bytes(ISF_SME_VL);
        if (bytes == 0 || bytes % 16 != 0) { /* Linux gives every thread of an SME CPU a streaming length */
            detected = isf_close_features(detected & ~(uint32_t)ISF_FEATURE_SME);
        }
    }
    const char *disable = getenv("ISAFORGE_DISABLE");
    if (disable != NULL) {
        env_allowed = ~isf_parse_feature_list(disable, "ISAFORGE_DISABLE");
    }
    const char *kernels = getenv("ISAFORGE_KERNELS");
    if (kernels != NULL) {
        choose_from_env(kernels);
    }
    fill_selection(&slots[0].selection);
    atomic_store(&current, 0u);
    trace_refused(slots[0].selection.active);
}

static void ensure_initialised(void) { pthread_once(&init_once, initialise); }

size_t isf_l1d_bytes(void) {
    ensure_initialised();
    return l1d_bytes;
}

const isf_selection *isf_selection_enter(void) {
    ensure_initialised();
    for (;;) {
        unsigned i = atomic_load(&current);
        atomic_fetch_add(&slots[i].readers, 1u);
        if (atomic_load(&current) == i) { /* still current after we pinned it: a publisher will wait for us */
            pinned_here++;
            return &slots[i].selection;
        }
        atomic_fetch_sub(&slots[i].readers, 1u);
    }
}

void isf_selection_leave(const isf_selection *sel) {
    slot *s = (slot *)(void *)((unsigned char *)(uintptr_t)sel - offsetof(slot, selection));
    atomic_fetch_sub(&s->readers, 1u);
    pinned_here--;
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
    if (pinned_here != 0) {
        return ISF_ERR_WOULD_DEADLOCK;
    }
    ensure_initialised();
    pthread_mutex_lock(&publish_lock);
    cap = allowed;
    publish();
    pthread_mutex_unlock(&publish_lock);
    return ISF_OK;
}

isf_status isf_select_kernel(isf_op op, const char *name) {
    if ((unsigned)op >= ISF_OP_COUNT) {
        return ISF_ERR_INVALID_ARG;
    }
    const isf_kernel *k = name != NULL ? kernel_named(op, name, strlen(name)) : NULL;
    if (name != NULL && k == NULL) {
        return ISF_ERR_INVALID_ARG;
    }
    if (pinned_here != 0) { /* checked before the lock: a publisher holding it may be waiting for this thread */
        return ISF_ERR_WOULD_DEADLOCK;
    }
    ensure_initialised();
    pthread_mutex_lock(&publish_lock);
    isf_status st = k == NULL || runnable(k, active_under(cap)) ? ISF_OK : ISF_ERR_UNSUPPORTED;
    if (st == ISF_OK) {
        chosen[op] = k;
        publish();
    }
    pthread_mutex_unlock(&publish_lock);
    return st;
}

const isf_kernel *isf_named_kernel(isf_op op) {
    ensure_initialised();
    pthread_mutex_lock(&publish_lock);
    const isf_kernel *k = (unsigned)op < ISF_OP_COUNT ? chosen[op] : NULL;
    pthread_mutex_unlock(&publish_lock);
    return k;
}

const char *isf_op_name(isf_op op) { return (unsigned)op < ISF_OP_COUNT ? isf_ops[op].name : NULL; }

/* The i-th kernel of op, most preferred first: the table's order. */
static const isf_kernel *kernel_by_preference(isf_op op, size_t i) {
    for (size_t j = 0; j < isf_kernel_table_count; j++) {
        if (isf_kernel_table[j].op == op && i-- == 0) {
            return &isf_kernel_table[j];
        }
    }
    return NULL;
}

size_t isf_kernel_count(isf_op op) {
    size_t count = 0;
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        count += isf_kernel_table[i].op == op;
    }
    return count;
}

isf_status isf_kernel_info(isf_op op, size_t i, isf_kernel_desc *out) {
    const isf_kernel *k = (unsigned)op < ISF_OP_COUNT ? kernel_by_preference(op, i) : NULL;
    if (k == NULL || out == NULL) {
        return ISF_ERR_INVALID_ARG;
    }
    *out = (isf_kernel_desc){k->name, k->variant,  k->mr,       k->nr,
                             k->kr,   k->scalable, k->required, runnable(k, isf_active_features())};
    return ISF_OK;
}

const isf_kernel *isf_selected_kernel(isf_op op) {
    if ((unsigned)op >= ISF_OP_COUNT) {
        return NULL;
    }
    const isf_selection *sel = isf_selection_enter();
    const isf_kernel *k = sel->kernel[op];
    isf_selection_leave(sel);
    return k;
}

const char *isf_kernel_name(isf_op op) {
    const isf_kernel *k = isf_selected_kernel(op);
    return k != NULL ? k->name : NULL;
}

size_t isf_kernel_vector_bytes(const isf_kernel *k) {
    switch (k->scalable) {
    case ISF_SCALES_WITH_SVE:
        return isf_sve_vector_bytes();
    case ISF_SCALES_WITH_SVL:
        return isf_streaming_vector_length();
    default:
        return 0;
    }
}

unsigned isf_kernel_nr(const isf_kernel *k, size_t vector_bytes) {
    return k->scalable ? k->nr * (unsigned)(vector_bytes / 16) : k->nr;
}

unsigned isf_kernel_mr(const isf_kernel *k, size_t vector_bytes) {
    return k->scalable == ISF_SCALES_WITH_SVL && k->mr > 1 ? k->mr * (unsigned)(vector_bytes / 16) : k->mr;
}

const char *isf_detect_source(void) {
    ensure_initialised();
    return source;
}
