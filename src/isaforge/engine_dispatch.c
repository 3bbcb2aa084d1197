/* An engine's dispatch (docs/engines.md): the one dispatcher every engine compiles, over the data-only tables that
 * enginegen.py generates into the engine's build directory as isaforge_engine.inc (its kernels, each op's C
 * signature, the engine's prefix). Build systems compile this fixed file as a plain source (Meson refuses generated
 * files named by string); every function it defines carries the engine's prefix (eng_dot_s8, eng_kernel_name, …).
 *
 * Each op's kernel is chosen once (pthread_once) from libisaforge's detection, ISAFORGE_DISABLE and the engine's own
 * <NAME>_DISABLE, and published with release/acquire atomics: concurrent first calls are race-free. ISAFORGE_TRACE
 * (isaforge test-qemu) records each kernel the first time it runs, and at start-up the automatic choice of every
 * role ("chosen") and each kernel the CPU cannot run ("refused": a feature absent, or capped by ISAFORGE_DISABLE)
 * or that the engine's own cap excludes ("capped"). */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <isaforge/isaforge.h>

typedef void (*isf_engine_fn)(void); /* converted back to the op's type before every call */

#define ISF_ENGINE_MAX_TUNED 8 /* isaforge/engine/model.py MAX_TUNED */

typedef struct {
    const char *name, *variant;
    unsigned mr, nr, kr;
    int scalable;
    uint32_t required;                    /* ISF_FEATURE_* bits */
    uint32_t tuned[ISF_ENGINE_MAX_TUNED]; /* ISF_CORE values it is tuned for, 0 after the last; none: any core */
    uint32_t roles;                       /* bit r: serves the op's role r; 0: every role */
    isf_engine_fn fn;
    const void *interface; /* the op's <prefix>_<op>_kernel of this kernel: name, run, members, packing */
} isf_engine_kernel;

/* A role's rule over the call's selecting parameter, compared as an unsigned 64-bit number. */
typedef enum {
    ISF_ENGINE_ANY,
    ISF_ENGINE_EQ,
    ISF_ENGINE_NE,
    ISF_ENGINE_LT,
    ISF_ENGINE_LE,
    ISF_ENGINE_GT,
    ISF_ENGINE_GE
} isf_engine_cmp;

typedef struct {
    const char *name;
    isf_engine_cmp cmp;
    unsigned long long value;
} isf_engine_role;

#include "isaforge_engine.inc"

#define ISF_ENGINE_PASTE(a, b) a##_##b
#define ISF_ENGINE_JOIN(a, b) ISF_ENGINE_PASTE(a, b)
#define ENGINE(name) ISF_ENGINE_JOIN(ISF_ENGINE_PREFIX, name) /* ENGINE(kernel_name): eng_kernel_name */

typedef ENGINE(op) engine_op;

static pthread_once_t isf_engine_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t isf_engine_select_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t isf_engine_active; /* written once, before isf_engine_chosen is first published */
static uint32_t isf_engine_core;   /* likewise: the core a kernel tuned for one is chosen on */
static _Atomic int isf_engine_chosen[ISF_ENGINE_ROLE_TOTAL]; /* by isf_engine_first_role[op] + role */
static _Atomic(unsigned char) isf_engine_ran[ISF_ENGINE_KERNEL_COUNT];

static int isf_engine_runnable_under(size_t i, uint32_t features) {
    return (isf_engine_kernels[i].required & ~features) == 0;
}

static int isf_engine_runnable(size_t i) { return isf_engine_runnable_under(i, isf_engine_active); }

static int isf_engine_valid(engine_op op) { return (unsigned)op < ISF_ENGINE_OP_COUNT; }

/* A kernel tuned for cores suits only those; any other suits every core. */
static int isf_engine_suits_core(size_t i) {
    const uint32_t *tuned = isf_engine_kernels[i].tuned;
    int suits = tuned[0] == 0;
    for (size_t t = 0; t < ISF_ENGINE_MAX_TUNED && tuned[t] != 0; t++) {
        suits |= tuned[t] == isf_engine_core;
    }
    return suits;
}

static int isf_engine_serves(size_t i, size_t role) {
    return isf_engine_kernels[i].roles == 0 || (isf_engine_kernels[i].roles >> role & 1u) != 0;
}

static size_t isf_engine_role_count(engine_op op) { return isf_engine_first_role[op + 1] - isf_engine_first_role[op]; }

/* The first kernel of the op that serves the role, runs under the active features and suits the core, in the
 * table's order (most preferred first, a variant's tuned kernels before its others); the role's portable kernel
 * always qualifies, and the generator refuses an engine without one (engine/checks.py). */
static int isf_engine_best(engine_op op, size_t role) {
    size_t i = isf_engine_first[op], end = isf_engine_first[op + 1];
    while (i + 1 < end && !(isf_engine_serves(i, role) && isf_engine_runnable(i) && isf_engine_suits_core(i))) {
        i++;
    }
    return (int)i;
}

/* The role of a call: the first whose rule the selecting parameter meets; the last role has none. */
static size_t isf_engine_role_for(engine_op op, unsigned long long v) {
    size_t first = isf_engine_first_role[op], count = isf_engine_role_count(op);
    for (size_t r = 0; r + 1 < count; r++) {
        const isf_engine_role *rule = &isf_engine_roles[first + r];
        int meets = rule->cmp == ISF_ENGINE_EQ   ? v == rule->value
                    : rule->cmp == ISF_ENGINE_NE ? v != rule->value
                    : rule->cmp == ISF_ENGINE_LT ? v < rule->value
                    : rule->cmp == ISF_ENGINE_LE ? v <= rule->value
                    : rule->cmp == ISF_ENGINE_GT ? v > rule->value
                    : rule->cmp == ISF_ENGINE_GE ? v >= rule->value
                                                 : 1;
        if (meets) {
            return r;
        }
    }
    return count - 1;
}

static void isf_engine_initialise(void) {
    uint32_t allowed = isf_active_features(); /* the CPU's features under ISAFORGE_DISABLE */
    isf_engine_active = isf_active_features_without(ISF_ENGINE_DISABLE);
    isf_engine_core = isf_running_core();
    for (size_t i = 0; i < ISF_ENGINE_KERNEL_COUNT; i++) {
        if (!isf_engine_runnable(i)) {
            const char *event = isf_engine_runnable_under(i, allowed) ? "capped" : "refused";
            isf_trace_kernel(event, ISF_ENGINE_NAME, isf_engine_kernels[i].name);
        }
    }
    for (int op = 0; op < ISF_ENGINE_OP_COUNT; op++) {
        for (size_t role = 0; role < isf_engine_role_count((engine_op)op); role++) {
            int best = isf_engine_best((engine_op)op, role);
            isf_trace_kernel("chosen", ISF_ENGINE_NAME, isf_engine_kernels[best].name);
            atomic_store_explicit(&isf_engine_chosen[isf_engine_first_role[op] + role], best, memory_order_release);
        }
    }
}

static void isf_engine_ensure(void) { pthread_once(&isf_engine_once, isf_engine_initialise); }

static int isf_engine_chosen_now(engine_op op, size_t role) {
    isf_engine_ensure();
    return atomic_load_explicit(&isf_engine_chosen[isf_engine_first_role[op] + role], memory_order_acquire);
}

/* The kernel to run now for the role; traced the first time it runs. */
static const isf_engine_kernel *isf_engine_current(engine_op op, size_t role) {
    int i = isf_engine_chosen_now(op, role);
    if (!atomic_load_explicit(&isf_engine_ran[i], memory_order_relaxed) && !atomic_exchange(&isf_engine_ran[i], 1)) {
        isf_trace_kernel("ran", ISF_ENGINE_NAME, isf_engine_kernels[i].name);
    }
    return &isf_engine_kernels[i];
}

/* The ops: each a call of its role's kernel through the op's own function type, and the chooser that hands the
 * engine one kernel's whole interface. */
#define ISF_ENGINE_OP_FUNCTIONS(index, op, returns, params, args, return_keyword, selector)                   \
    returns ENGINE(op) params {                                                                               \
        size_t role = isf_engine_role_for((engine_op)index, (unsigned long long)(selector));                  \
        return_keyword((ISF_ENGINE_JOIN(ENGINE(op), fn))isf_engine_current((engine_op)index, role)->fn) args; \
    }                                                                                                         \
    const ISF_ENGINE_JOIN(ENGINE(op), kernel) *                                                               \
        ISF_ENGINE_JOIN(ENGINE(op), choose)(ISF_ENGINE_JOIN(ENGINE(op), role) role) {                         \
        if ((size_t)role >= isf_engine_role_count((engine_op)index)) {                                        \
            return NULL;                                                                                      \
        }                                                                                                     \
        return isf_engine_current((engine_op)index, (size_t)role)->interface;                                 \
    }
ISF_ENGINE_OPS(ISF_ENGINE_OP_FUNCTIONS)

size_t ENGINE(kernel_count)(engine_op op) {
    return isf_engine_valid(op) ? isf_engine_first[op + 1] - isf_engine_first[op] : 0;
}

isf_status ENGINE(kernel_info)(engine_op op, size_t i, isf_kernel_desc *out) {
    if (!isf_engine_valid(op) || out == NULL || i >= ENGINE(kernel_count)(op)) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_engine_ensure();
    size_t at = isf_engine_first[op] + i;
    const isf_engine_kernel *k = &isf_engine_kernels[at];
    out->name = k->name;
    out->variant = k->variant;
    out->mr = k->mr;
    out->nr = k->nr;
    out->kr = k->kr;
    out->scalable = k->scalable;
    out->required = k->required;
    out->runnable = isf_engine_runnable(at);
    return ISF_OK;
}

const char *ENGINE(kernel_name)(engine_op op) {
    return isf_engine_valid(op) ? isf_engine_kernels[isf_engine_chosen_now(op, isf_engine_role_count(op) - 1)].name
                                : NULL;
}

const char *ENGINE(op_name)(engine_op op) { return isf_engine_valid(op) ? isf_engine_op_names[op] : NULL; }

isf_status ENGINE(select_kernel)(engine_op op, const char *name) {
    if (!isf_engine_valid(op)) {
        return ISF_ERR_INVALID_ARG;
    }
    isf_engine_ensure();
    int pick = -1;
    for (size_t i = isf_engine_first[op]; name != NULL && i < isf_engine_first[op + 1] && pick < 0; i++) {
        pick = strcmp(isf_engine_kernels[i].name, name) == 0 ? (int)i : -1;
    }
    if (name != NULL && pick < 0) {
        return ISF_ERR_INVALID_ARG;
    }
    if (name != NULL && !isf_engine_runnable((size_t)pick)) {
        return ISF_ERR_UNSUPPORTED;
    }
    pthread_mutex_lock(&isf_engine_select_lock);
    for (size_t role = 0; role < isf_engine_role_count(op); role++) {
        int now = name == NULL ? isf_engine_best(op, role) : isf_engine_serves((size_t)pick, role) ? pick : -1;
        if (now >= 0) {
            atomic_store_explicit(&isf_engine_chosen[isf_engine_first_role[op] + role], now, memory_order_release);
        }
    }
    pthread_mutex_unlock(&isf_engine_select_lock);
    return ISF_OK;
}

uint32_t ENGINE(active_features)(void) {
    isf_engine_ensure();
    return isf_engine_active;
}
