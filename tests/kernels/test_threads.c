/* Caps and vector lengths changing under the library's feet, from other threads:
 *  - between every pair of calls of the packed path (size, pack, GEMM): the size fits whatever is packed, a short
 *    buffer is refused with nothing written; the GEMM runs any kernel the cap allows that reads the buffer's layout
 *    (not only the selected one), and a buffer no such kernel reads is refused with C untouched;
 *  - during calls: when isf_set_feature_mask returns, every call that started before it has finished, calls that
 *    start later use the new selection, and no reader ever sees features and kernels of two different caps;
 *  - (SVE, SME) threads with other vector lengths: exact results, or a refusal of weights packed for another
 *    length; the SVE length and the streaming one (SVL) apart: a kernel scaling with one ignores the other;
 *  - from inside a run (parallel_for of isf_gemm_run_parallel on the calling thread): isf_set_feature_mask and
 *    isf_select_kernel would wait for that run, so they refuse (ISF_ERR_WOULD_DEADLOCK) and change nothing; a
 *    watchdog turns a hang into a failure.
 * Every buffer written ends at an inaccessible page. Exit status: the number of failed checks. */
#include "test_util.h" /* first: it sets _GNU_SOURCE */

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/prctl.h>
#ifndef PR_SVE_SET_VL
#define PR_SVE_SET_VL 50
#endif
#ifndef PR_SME_SET_VL
#define PR_SME_SET_VL 63
#endif
#endif

enum { M = 5, N = 13, K = 37, PAD = 3, SENTINEL = 0xA5, PACK_FILL = 0xCD };

/* ---- helpers ------------------------------------------------------------------------------------------------- */

static void *set_mask_thread(void *arg) {
    isf_set_feature_mask(*(const uint32_t *)arg);
    return NULL;
}

/* The cap, set by another thread. */
static void set_mask_elsewhere(uint32_t mask) {
    pthread_t t;
    pthread_create(&t, NULL, set_mask_thread, &mask);
    pthread_join(t, NULL);
}

/* The distinct feature sets the op's kernels need, least first (the caps that select each kernel). */
static size_t kernel_masks(isf_op op, uint32_t *out) {
    size_t count = 0;
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        const isf_kernel *k = &isf_kernel_table[i];
        int seen = 0;
        for (size_t j = 0; j < count; j++) {
            seen |= out[j] == k->required;
        }
        if (k->op == op && !seen && (k->required & ~isf_cpu_features()) == 0) {
            out[count++] = k->required;
        }
    }
    return count;
}

typedef struct {
    guarded ga, gb, gc;
    unsigned char *a, *b, *c;
    size_t c_bytes, out;
} operands;

static int operands_init(operands *o, isf_op op) {
    size_t in = isf_ops[op].in_bytes;
    o->out = isf_ops[op].out_bytes;
    o->c_bytes = ((M - 1) * (N + PAD) + N) * o->out;
    o->a = guarded_alloc(&o->ga, M * K * in, 0);
    o->b = guarded_alloc(&o->gb, K * N * in, 0);
    o->c = guarded_alloc(&o->gc, o->c_bytes, 0);
    if (o->a == NULL || o->b == NULL || o->c == NULL) {
        return 0;
    }
    fill_matrix(op, o->a, M, K, K, 1);
    fill_matrix(op, o->b, K, N, N, 2);
    return 1;
}

static void operands_free(operands *o) { guarded_free(&o->ga), guarded_free(&o->gb), guarded_free(&o->gc); }

/* C's padding (ldc = N + PAD) still holds the sentinel. */
static int padding_untouched(const operands *o) {
    for (size_t r = 0; r + 1 < M; r++) {
        if (!all_bytes(o->c + (r * (N + PAD) + N) * o->out, PAD * o->out, SENTINEL)) {
            return 0;
        }
    }
    return 1;
}

/* ---- the packed path with a cap change before each of its three calls ------------------------------------------ */

/* The smallest buffer isf_pack_b accepts now is found by bisection; one byte less is refused with nothing written,
 * and packing into exactly that many bytes writes nothing past them (the guard page). */
static void short_buffers_are_refused(isf_op op, const operands *o) {
    size_t size = isf_packed_b_size(op, N, K), low = 0, high = size;
    guarded gp;
    unsigned char *p = guarded_alloc(&gp, size, 0);
    CHECK(p != NULL);
    if (p == NULL) {
        return;
    }
    while (low + 1 < high) { /* isf_pack_b(high) is OK, isf_pack_b(low) is not */
        size_t mid = low + (high - low) / 2;
        memset(p, PACK_FILL, size);
        isf_status st = isf_pack_b(op, N, K, o->b, N, p + size - mid, mid);
        if (st == ISF_OK) {
            high = mid;
        } else {
            CHECK(st == ISF_ERR_INVALID_ARG && all_bytes(p, size, PACK_FILL));
            low = mid;
        }
    }
    CHECK(isf_pack_b(op, N, K, o->b, N, p + size - high, high) == ISF_OK);
    memset(p, PACK_FILL, size);
    CHECK(isf_pack_b(op, N, K, o->b, N, p + size - high + 1, high - 1) == ISF_ERR_INVALID_ARG);
    CHECK(all_bytes(p, size, PACK_FILL));
    guarded_free(&gp);
}

/* 1 when a kernel of `op` that the active features allow reads the layout `packer` packed: isf_gemm_packed runs it
 * (this thread, so the vector length the buffer was packed at). */
static int layout_readable_now(isf_op op, const isf_kernel *packer) {
    uint32_t active = isf_active_features();
    int readable = 0;
    for (size_t i = 0; i < isf_kernel_table_count; i++) {
        const isf_kernel *k = &isf_kernel_table[i];
        readable |= k->op == op && (k->required & ~active) == 0 && k->layout.id == packer->layout.id;
    }
    return readable;
}

static void packed_path_under(isf_op op, operands *o, const uint32_t caps[3]) {
    set_mask_elsewhere(caps[0]);
    size_t size = isf_packed_b_size(op, N, K);
    CHECK(size > 0);
    guarded gp;
    unsigned char *packed = guarded_alloc(&gp, size, 0);
    CHECK(packed != NULL);
    if (packed == NULL) {
        return;
    }
    set_mask_elsewhere(caps[1]);
    const isf_kernel *packed_for = isf_selected_kernel(op);
    CHECK(isf_pack_b(op, N, K, o->b, N, packed, size) == ISF_OK); /* the size fits every kernel */
    set_mask_elsewhere(caps[2]);
    /* Before layouts, only the selected kernel read a buffer: a cap that kept the packing kernel but selected a
     * more preferred one refused it. */
    int readable = layout_readable_now(op, packed_for);
    memset(o->c, SENTINEL, o->c_bytes);
    isf_status st = isf_gemm_packed(op, M, N, K, o->a, K, packed, size, o->c, N + PAD);
    if (readable) {
        CHECK(st == ISF_OK && product_is_exact(op, M, N, K, o->c, N + PAD));
    } else {
        CHECK(st == ISF_ERR_UNSUPPORTED && all_bytes(o->c, o->c_bytes, SENTINEL));
    }
    CHECK(padding_untouched(o));
    guarded_free(&gp);
}

static void packed_path_with_caps_between_calls(void) {
    for (int op = 0; op < (int)isf_op_count; op++) {
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops run through plans only */
        }
        uint32_t masks[32];
        size_t count = kernel_masks((isf_op)op, masks);
        operands o;
        CHECK(operands_init(&o, (isf_op)op));
        for (size_t i = 0; i < count * count * count; i++) {
            uint32_t caps[3] = {masks[i % count], masks[i / count % count], masks[i / count / count]};
            packed_path_under((isf_op)op, &o, caps);
        }
        for (size_t i = 0; i < count; i++) {
            set_mask_elsewhere(masks[i]);
            short_buffers_are_refused((isf_op)op, &o);
        }
        set_mask_elsewhere(UINT32_MAX);
        operands_free(&o);
    }
}

/* ---- caps during calls --------------------------------------------------------------------------------------- */

enum { BIG = 64, CALL_LOG = 1 << 16 };

static atomic_uint clock_ticks; /* one order for call starts and ends and cap publications */
static atomic_int stop;

typedef struct {
    int packed;
    const void *a, *b, *packed_b;
    size_t packed_bytes;
    unsigned starts[CALL_LOG], ends[CALL_LOG];
    isf_status status[CALL_LOG];
    size_t calls, wrong;
    atomic_size_t finished; /* calls finished, for the main thread to wait on */
} worker;

static void *gemm_worker(void *arg) {
    worker *w = arg;
    int32_t *c = malloc(sizeof(int32_t) * BIG * BIG);
    for (; !atomic_load(&stop) && w->calls < CALL_LOG; w->calls++) {
        size_t i = w->calls;
        w->starts[i] = atomic_fetch_add(&clock_ticks, 1u);
        w->status[i] =
            w->packed ? isf_gemm_packed(ISF_OP_GEMM_S8, BIG, BIG, BIG, w->a, BIG, w->packed_b, w->packed_bytes, c, BIG)
                      : isf_gemm_s8(BIG, BIG, BIG, w->a, BIG, w->b, BIG, c, BIG);
        w->ends[i] = atomic_fetch_add(&clock_ticks, 1u);
        w->wrong += w->status[i] == ISF_OK && !product_is_exact(ISF_OP_GEMM_S8, BIG, BIG, BIG, c, BIG);
        atomic_fetch_add(&w->finished, 1u);
    }
    atomic_store(&w->finished, SIZE_MAX); /* out of log space: nothing more to wait for */
    free(c);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static atomic_size_t torn_snapshots, snapshots_read;

/* The s8 kernel of a pinned selection and a clock tick taken while it was pinned: the tick precedes the leave, so
 * any cap whose return (after tick) comes before it cannot have been waiting for this reader. */
typedef struct {
    unsigned tick;
    const char *kernel;
} pinned_snapshot;

static pinned_snapshot pinned_log[CALL_LOG];
static size_t pinned_logged;

static void *snapshot_reader(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        const isf_selection *sel = isf_selection_enter();
        for (int op = 0; op < (int)isf_op_count; op++) {
            atomic_fetch_add(&torn_snapshots, sel->kernel[op] != isf_best_kernel((isf_op)op, sel->active));
        }
        if (pinned_logged < CALL_LOG) {
            if (pinned_logged % 8 == 0) {
                sleep_ms(1); /* a pin held as long as a GEMM's: a cap that does not wait returns meanwhile */
            }
            pinned_log[pinned_logged++] =
                (pinned_snapshot){atomic_fetch_add(&clock_ticks, 1u), sel->kernel[ISF_OP_GEMM_S8]->name};
        }
        isf_selection_leave(sel);
        atomic_fetch_add(&snapshots_read, 1);
    }
    return NULL;
}

static isf_status packed_status_under(const char *kernel, const char *packed_for) {
    return strcmp(kernel, packed_for) == 0 ? ISF_OK : ISF_ERR_UNSUPPORTED;
}

typedef struct {
    unsigned before, after; /* clock ticks just before isf_set_feature_mask and just after it returned */
    const char *kernel;     /* the s8 kernel selected after it returned */
} cap_change;

/* A call runs with the selection it pinned at some moment of [start, end]: the one in force at its start, or one
 * published during the call; a packed call refuses weights packed for a kernel that selection excludes (the weights
 * are packed for the most preferred kernel, so any cap that allows it selects it: "selected" and "allowed" agree
 * here). Whether a call ran past a cap's return cannot be told from these ticks (a call's end tick follows its leave,
 * so a cap may rightly return between them); the pinned snapshots below tell it. */
static void check_calls_against(const worker *w, const cap_change *changes, size_t count, const char *packed_for) {
    for (size_t i = 0; i < w->calls; i++) {
        if (!w->packed) {
            CHECK(w->status[i] == ISF_OK);
            continue;
        }
        int allowed = 0;
        const char *at_start = packed_for; /* the initial selection packed the weights */
        for (size_t j = 0; j < count; j++) {
            at_start = changes[j].after < w->starts[i] ? changes[j].kernel : at_start;
            if (changes[j].before < w->ends[i] && changes[j].after > w->starts[i]) {
                allowed |= w->status[i] == packed_status_under(changes[j].kernel, packed_for);
            }
        }
        allowed |= w->status[i] == packed_status_under(at_start, packed_for);
        CHECK(allowed);
    }
    CHECK(w->wrong == 0);
}

/* isf_set_feature_mask waits for every reader of the selection it replaces: a selection pinned at tick t is the one
 * the last cap returned before t published (the initial one before any), or one a later cap, begun before t,
 * published. A reader still holding an older one after that cap returned is a cap that did not wait. */
static void check_pinned_snapshots(const cap_change *changes, size_t count, const char *initial) {
    size_t stale = 0;
    for (size_t i = 0; i < pinned_logged; i++) {
        const pinned_snapshot *s = &pinned_log[i];
        size_t in_force = 0; /* index into changes + 1; 0: the initial selection */
        for (size_t j = 0; j < count; j++) {
            in_force = changes[j].after < s->tick ? j + 1 : in_force;
        }
        int fits = strcmp(s->kernel, in_force ? changes[in_force - 1].kernel : initial) == 0;
        for (size_t j = in_force; j < count && !fits; j++) {
            fits = changes[j].before < s->tick && strcmp(s->kernel, changes[j].kernel) == 0;
        }
        stale += !fits;
    }
    CHECK(stale == 0);
}

/* Until each worker has finished a call it started after now: a slow machine (QEMU under load) gets as many calls
 * between cap changes as a fast one, instead of whatever fits in a fixed sleep. */
static void wait_for_a_call_of_each(worker *const *workers, size_t n) {
    size_t seen[2];
    for (size_t i = 0; i < n; i++) {
        seen[i] = atomic_load(&workers[i]->finished);
    }
    for (size_t i = 0; i < n; i++) {
        while (atomic_load(&workers[i]->finished) != SIZE_MAX && atomic_load(&workers[i]->finished) < seen[i] + 2) {
            sleep_ms(1);
        }
    }
}

static void caps_during_calls(void) {
    uint32_t masks[32];
    size_t count = kernel_masks(ISF_OP_GEMM_S8, masks);
    isf_set_feature_mask(UINT32_MAX);
    int8_t *a = malloc(BIG * BIG), *b = malloc(BIG * BIG);
    fill_matrix(ISF_OP_GEMM_S8, a, BIG, BIG, BIG, 1);
    fill_matrix(ISF_OP_GEMM_S8, b, BIG, BIG, BIG, 2);
    size_t size = isf_packed_b_size(ISF_OP_GEMM_S8, BIG, BIG);
    void *packed = malloc(size);
    const char *packed_for = isf_kernel_name(ISF_OP_GEMM_S8);
    CHECK(isf_pack_b(ISF_OP_GEMM_S8, BIG, BIG, b, BIG, packed, size) == ISF_OK);

    static worker direct, from_packed;
    direct = (worker){.packed = 0, .a = a, .b = b};
    from_packed = (worker){.packed = 1, .a = a, .packed_b = packed, .packed_bytes = size};
    pthread_t threads[3];
    pthread_create(&threads[0], NULL, gemm_worker, &direct);
    pthread_create(&threads[1], NULL, gemm_worker, &from_packed);
    pthread_create(&threads[2], NULL, snapshot_reader, NULL);
    cap_change changes[16];
    size_t n_changes = 0;
    worker *const workers[2] = {&direct, &from_packed};
    for (size_t round = 0; round < 2 * count && n_changes < 16; round++) { /* every kernel's cap, then all on */
        wait_for_a_call_of_each(workers, 2);
        uint32_t mask = round % 2 ? UINT32_MAX : masks[(round / 2) % count];
        cap_change *ch = &changes[n_changes++];
        ch->before = atomic_fetch_add(&clock_ticks, 1u);
        isf_set_feature_mask(mask);
        ch->after = atomic_fetch_add(&clock_ticks, 1u);
        ch->kernel = isf_kernel_name(ISF_OP_GEMM_S8);
        CHECK(isf_selected_kernel(ISF_OP_GEMM_S8) == isf_best_kernel(ISF_OP_GEMM_S8, isf_active_features()));
    }
    wait_for_a_call_of_each(workers, 2);
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++) {
        pthread_join(threads[i], NULL);
    }
    printf("caps during calls: %zu cap changes, %zu direct and %zu packed calls, %zu snapshots read\n", n_changes,
           direct.calls, from_packed.calls, atomic_load(&snapshots_read));
    CHECK(direct.calls > n_changes && from_packed.calls > n_changes && atomic_load(&snapshots_read) > 0);
    CHECK(atomic_load(&torn_snapshots) == 0);
    check_calls_against(&direct, changes, n_changes, packed_for);
    check_calls_against(&from_packed, changes, n_changes, packed_for);
    check_pinned_snapshots(changes, n_changes, packed_for);
    isf_set_feature_mask(UINT32_MAX);
    free(a), free(b), free(packed);
}

/* ---- SVE and SME: weights packed at one vector length, used from a thread at another ----------------------------- */

#if defined(__aarch64__) && defined(__linux__)
typedef struct {
    int vector_bytes;
    int set_option; /* PR_SVE_SET_VL or PR_SME_SET_VL: which length the thread changes */
    isf_op op;
    const void *packed;
    size_t packed_bytes;
    operands *o;
    isf_status packed_status, direct_status;
    int direct_exact, packed_exact, untouched;
} vl_job;

/* Asks for a vector length; the kernel gives the largest the CPU has up to it (a64fx: 64 bytes at most). */
static int set_vector_length(int option, int bytes) {
    int got = prctl(option, bytes, 0, 0, 0);
    return got < 0 ? got : got & 0xffff;
}

static void *at_vector_length(void *arg) {
    vl_job *j = arg;
    j->vector_bytes = set_vector_length(j->set_option, j->vector_bytes);
    if (j->vector_bytes < 0) {
        j->packed_status = j->direct_status = (isf_status)-1;
        return NULL;
    }
    operands *o = j->o;
    memset(o->c, SENTINEL, o->c_bytes);
    j->packed_status = isf_gemm_packed(j->op, M, N, K, o->a, K, j->packed, j->packed_bytes, o->c, N + PAD);
    j->packed_exact = j->packed_status == ISF_OK && product_is_exact(j->op, M, N, K, o->c, N + PAD);
    j->untouched = j->packed_status != ISF_OK && all_bytes(o->c, o->c_bytes, SENTINEL);
    memset(o->c, SENTINEL, o->c_bytes);
    j->direct_status = isf_gemm_op(j->op, M, N, K, o->a, K, o->b, N, o->c, N + PAD);
    j->direct_exact =
        j->direct_status == ISF_OK && product_is_exact(j->op, M, N, K, o->c, N + PAD) && padding_untouched(o);
    return NULL;
}

/* `option` sets the length that kernels of `scaling` (ISF_SCALES_WITH_SVE or _SVL) read; every other kernel must
 * run the buffer whatever that length. */
static void packed_weights_across_vector_lengths(int option, int scaling) {
    static const int lengths[] = {16, 32, 64, 256};
    isf_set_feature_mask(UINT32_MAX);
    for (int op = 0; op < (int)isf_op_count; op++) {
        if (!isf_ops[op].plain) {
            continue; /* the quantized ops run through plans only */
        }
        const isf_kernel *kern = isf_selected_kernel((isf_op)op);
        operands o;
        CHECK(operands_init(&o, (isf_op)op));
        for (size_t from = 0; from < 4; from++) {
            vl_job pack_side = {lengths[from], option, (isf_op)op, NULL, 0, &o, 0, 0, 0, 0, 0};
            size_t size = isf_packed_b_size((isf_op)op, N, K) * 16; /* room for any length */
            void *packed = malloc(size);
            int packed_at = set_vector_length(option, lengths[from]);
            CHECK(packed_at > 0);
            CHECK(isf_pack_b((isf_op)op, N, K, o.b, N, packed, size) == ISF_OK);
            for (size_t to = 0; to < 4; to++) {
                vl_job use = pack_side;
                use.vector_bytes = lengths[to], use.packed = packed, use.packed_bytes = size;
                pthread_t t;
                pthread_create(&t, NULL, at_vector_length, &use);
                pthread_join(t, NULL);
                int same = kern->scalable != scaling || packed_at == use.vector_bytes;
                CHECK(use.direct_status == ISF_OK && use.direct_exact);
                CHECK(same ? use.packed_exact : use.packed_status == ISF_ERR_UNSUPPORTED && use.untouched);
            }
            free(packed);
        }
        operands_free(&o);
    }
}
#endif

/* ---- waiting calls from inside a run --------------------------------------------------------------------------- */

enum { WATCHDOG_SECONDS = 60 };

typedef struct {
    isf_status mask_status, select_status, unknown_status;
    uint32_t active_inside;
} inside_calls;

/* Runs every task on the calling thread, after the calls that would wait for the run this thread is in. */
static void calling_thread_for(void *pool, isf_task_fn fn, void *task, size_t range) {
    inside_calls *in = pool;
    in->mask_status = isf_set_feature_mask(0);
    in->select_status = isf_select_kernel(ISF_OP_GEMM_F32, NULL);
    in->unknown_status = isf_select_kernel(ISF_OP_GEMM_F32, "no such kernel"); /* bad input still says so */
    in->active_inside = isf_active_features();
    fn(task, 0, range);
}

static void waiting_calls_inside_a_run(void) {
    isf_set_feature_mask(UINT32_MAX);
    uint32_t active = isf_active_features();
    operands o;
    CHECK(operands_init(&o, ISF_OP_GEMM_F32));
    isf_gemm_desc d = {.op = ISF_OP_GEMM_F32, .n = N, .k = K, .weights = o.b, .ldw = N};
    isf_gemm *g = NULL;
    CHECK(isf_gemm_create(&d, &g) == ISF_OK);
    inside_calls in = {0};
    memset(o.c, SENTINEL, o.c_bytes);
    CHECK(isf_gemm_run_parallel(g, M, o.a, K, o.c, N + PAD, 0, calling_thread_for, &in) == ISF_OK);
    CHECK(in.mask_status == ISF_ERR_WOULD_DEADLOCK && in.select_status == ISF_ERR_WOULD_DEADLOCK);
    CHECK(in.unknown_status == ISF_ERR_INVALID_ARG);
    CHECK(in.active_inside == active && isf_active_features() == active);
    CHECK(product_is_exact(ISF_OP_GEMM_F32, M, N, K, o.c, N + PAD) && padding_untouched(&o));
    CHECK(isf_set_feature_mask(0) == ISF_OK && isf_active_features() == 0); /* out of the run: no longer refused */
    CHECK(isf_set_feature_mask(UINT32_MAX) == ISF_OK && isf_active_features() == active);
    isf_gemm_destroy(g);
    operands_free(&o);
}

static atomic_int inside_done;

static void *inside_a_run_thread(void *arg) {
    (void)arg;
    waiting_calls_inside_a_run();
    atomic_store(&inside_done, 1);
    return NULL;
}

/* On another thread, so that a call that never returns fails the program instead of hanging it. */
static void waiting_calls_inside_a_run_watched(void) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, inside_a_run_thread, NULL) == 0);
    for (int ms = 0; !atomic_load(&inside_done) && ms < WATCHDOG_SECONDS * 1000; ms += 10) {
        sleep_ms(10);
    }
    if (!atomic_load(&inside_done)) {
        fprintf(stderr, "waiting calls inside a run: no return within %d s (deadlock)\n", WATCHDOG_SECONDS);
        failures++;
        return; /* main's return ends the process, the stuck thread with it */
    }
    pthread_join(t, NULL);
    printf("waiting calls inside a run: returned\n");
}

int main(void) {
    packed_path_with_caps_between_calls();
    caps_during_calls();
#if defined(__aarch64__) && defined(__linux__)
    if (isf_cpu_features() & ISF_FEATURE_SVE) {
        packed_weights_across_vector_lengths(PR_SVE_SET_VL, ISF_SCALES_WITH_SVE);
    }
    if (isf_cpu_features() & ISF_FEATURE_SME) {
        packed_weights_across_vector_lengths(PR_SME_SET_VL, ISF_SCALES_WITH_SVL);
    }
#endif
    waiting_calls_inside_a_run_watched();
    return finish();
}
