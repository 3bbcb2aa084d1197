/* Runs a batch of GEMMs described by a job file (written by isaforge.gemmjob) and writes every C with the guard
 * bytes around it, so one QEMU start checks thousands of shapes and any write outside C's m×n window shows.
 *
 * Usage: gemm_runner JOB OUT [ALLOWED_MASK] [kernel=NAME] [vl=MAIN:THREAD] [probe=[-]a|b|c|packed]
 * Prints {"kernel": ..., "active": ...} on stdout. Exit 0 when every case ran (statuses are in OUT), 2 on bad use.
 *
 * Job: "ISFJ", u32 op, u32 cases, u32 flags, u64 a_bytes, u64 b_bytes, A, B, [u64 bias_bytes, bias], [f32 lo, f32 hi],
 *   then per case u64 m n k lda ldb ldc.
 *   flags bit 0: go through isf_pack_b + isf_gemm_packed instead of the one-call API.
 *   flags bit 1: guard pages. A, B, C and the packed-B buffer (sized exactly by isf_packed_b_size) each get their
 *     own mapping; the last byte the operand spans ((rows-1)·ld + cols elements) ends exactly at a PROT_NONE page,
 *     and a PROT_NONE page sits before the mapping, so reading past A/B or writing past C/packed faults (SIGSEGV).
 *     Each case's A and B are copied from the job's buffers into their mappings, which then turn read-only (as
 *     does the packed buffer once packed): the library must not write its inputs either. A plan's bias (its n
 *     values) gets such a mapping too.
 *   flags bit 2: go through a plan instead: isf_gemm_create (the case's B as ISF_WEIGHTS_KN weights, ldw = ldb),
 *     isf_gemm_run (flags 0), isf_gemm_destroy. The status is create's, or run's. Not with bit 0.
 *   flags bit 3 (plan only): bias_bytes and the bias follow B: C's element type, at least the widest case's n
 *     values; each case's plan gets the first n as isf_gemm_desc.bias.
 *   flags bit 4 (plan only): lo and hi follow (the bias): the plan clamps C to [lo, hi] (ISF_GEMM_CLAMP).
 *   isaforge bench counts one plan run by the executions between isf_gemm_run's entry and isf_gemm_destroy's, so
 *   plan mode calls nothing else of the library in between.
 *
 * Out, per case: i32 status, then G guard elements, the m×ldc block of C, G guard elements, where
 *   G = 8·ldc + 512 / sizeof(output element)
 * i.e. room for a whole 8-row tile of the widest SVE vectors (256 bytes) landing past either end. Every element
 * outside C's m×n window starts as 0xA5 bytes, so a write there shows. In guard-page mode the last row's padding
 * and the trailing guard lie beyond the PROT_NONE page: they cannot be written (that would fault), and the runner
 * writes them as 0xA5 bytes, so the format stays the same.
 *
 * kernel=NAME: run the op with that kernel (isf_select_kernel, after the mask); exit 2 if it is not built or cannot
 * run here.
 * vl=MAIN:THREAD (aarch64, bytes): the main thread sets its SVE vector length to MAIN and runs the first case once
 * (the library initialises and caches whatever it caches); then a new thread sets THREAD and runs every case.
 * probe=NAME (guard pages only): after the first case, touch the byte just past NAME's span (-NAME: the byte just
 * before its mapping's data) — a self-test that the guard pages sit exactly there: the runner must die of SIGSEGV. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__aarch64__)
#include <sys/prctl.h>
#ifndef PR_SVE_SET_VL
#define PR_SVE_SET_VL 50
#endif
#ifndef PR_SVE_VL_LEN_MASK
#define PR_SVE_VL_LEN_MASK 0xffff
#endif
#endif

#include "isf_internal.h"

enum {
    SENTINEL = 0xA5,
    PACKED_FLAG = 1,
    GUARD_PAGES_FLAG = 2,
    PLAN_FLAG = 4,
    BIAS_FLAG = 8,
    CLAMP_FLAG = 16,
    GUARD_ROWS = 8,
    GUARD_TAIL_BYTES = 512
};

typedef struct {
    uint64_t m, n, k, lda, ldb, ldc;
} job_case;

typedef struct {
    uint32_t op, cases, flags;
    const unsigned char *a, *b, *bias;
    float lo, hi; /* CLAMP_FLAG */
    const job_case *cases_table;
    FILE *out;
    const char *probe;
    uint32_t mask;      /* ALLOWED_MASK, applied before the batch runs */
    const char *kernel; /* kernel=NAME, selected after the mask; NULL: dispatch's choice */
    unsigned thread_vl;
} job;

/* One operand's memory: `lead` usable bytes before p, `span` at p, then (malloc mode only) `tail` more. */
typedef struct {
    unsigned char *base, *p;
    size_t base_bytes;
    int mapped;
} region;

static void die(const char *what) {
    fprintf(stderr, "gemm_runner: %s\n", what);
    exit(2);
}

static void *read_exact(FILE *f, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL || fread(p, 1, bytes, f) != bytes) {
        die("short job file");
    }
    return p;
}

/* Elements a rows×cols operand with leading dimension ld really spans: the last row stops at `cols`. */
static size_t span_elems(uint64_t rows, uint64_t cols, uint64_t ld) {
    return rows && cols ? (size_t)((rows - 1) * ld + cols) : 0;
}

static size_t guard_bytes(const job_case *jc, size_t out_bytes) {
    return GUARD_ROWS * jc->ldc * out_bytes + GUARD_TAIL_BYTES;
}

static void map_guarded(region *r, size_t lead, size_t span) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (lead + span + page - 1) / page * page;
    r->base_bytes = data + 2 * page;
    void *base = mmap(NULL, r->base_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        die("mmap failed");
    }
    r->base = base;
    if (mprotect(r->base, page, PROT_NONE) != 0 || mprotect(r->base + page + data, page, PROT_NONE) != 0) {
        die("mprotect failed");
    }
    r->p = r->base + page + data - span; /* the span's last byte is the last byte before the PROT_NONE page */
    r->mapped = 1;
}

static unsigned char *region_open(region *r, size_t lead, size_t span, size_t tail, int guard_pages) {
    if (guard_pages) {
        map_guarded(r, lead, span);
    } else {
        r->base_bytes = lead + span + tail;
        r->base = malloc(r->base_bytes ? r->base_bytes : 1);
        if (r->base == NULL) {
            die("out of memory");
        }
        r->p = r->base + lead;
        r->mapped = 0;
    }
    return r->p;
}

/* Inputs are const to the library: under guard pages a write into them faults too. */
static void region_seal(region *r) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (r->mapped && mprotect(r->base + page, r->base_bytes - 2 * page, PROT_READ) != 0) {
        die("mprotect failed");
    }
}

static void region_close(region *r) {
    if (r->mapped) {
        munmap(r->base, r->base_bytes);
    } else {
        free(r->base);
    }
}

/* The operands of one case, where the GEMM sees them. */
typedef struct {
    region a, b, c, packed, bias;
    size_t a_span, b_span, c_span, packed_span;
} operands;

/* Touch the byte just past (or, for "-name", just before the data of) the named operand: must fault. */
static void probe(operands *o, const char *name) {
    int before = name[0] == '-';
    name += before;
    region *r = !strcmp(name, "a") ? &o->a : !strcmp(name, "b") ? &o->b : !strcmp(name, "c") ? &o->c : &o->packed;
    size_t span = r == &o->a ? o->a_span : r == &o->b ? o->b_span : r == &o->c ? o->c_span : o->packed_span;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    volatile unsigned char *at = before ? r->base + page - 1 : r->p + span;
    *at = *at; /* the read alone faults on a PROT_NONE page */
    fprintf(stderr, "gemm_runner: probe %s%s survived\n", before ? "-" : "", name);
    exit(3);
}

static isf_status run_packed(const job *j, const job_case *jc, operands *o) {
    o->packed_span = isf_packed_b_size((isf_op)j->op, jc->n, jc->k);
    if (o->packed_span == 0) {
        return ISF_ERR_INVALID_ARG;
    }
    void *packed = region_open(&o->packed, 0, o->packed_span, 0, (j->flags & GUARD_PAGES_FLAG) != 0);
    isf_status st = isf_pack_b((isf_op)j->op, jc->n, jc->k, o->b.p, jc->ldb, packed, o->packed_span);
    region_seal(&o->packed);
    if (st == ISF_OK) {
        st = isf_gemm_packed((isf_op)j->op, jc->m, jc->n, jc->k, o->a.p, jc->lda, packed, o->packed_span, o->c.p,
                             jc->ldc);
    }
    return st;
}

/* The plan's C = clamp(A·W + bias) in one create and one run, nothing else of the library in between (bench). */
static isf_status run_plan(const job *j, const job_case *jc, operands *o) {
    isf_gemm_desc d = {.op = (isf_op)j->op,
                       .n = jc->n,
                       .k = jc->k,
                       .weights = o->b.p,
                       .ldw = jc->ldb,
                       .layout = ISF_WEIGHTS_KN,
                       .bias = j->flags & BIAS_FLAG ? o->bias.p : NULL};
    if (j->flags & CLAMP_FLAG) {
        d.flags = ISF_GEMM_CLAMP, d.out_min = j->lo, d.out_max = j->hi;
    }
    isf_gemm *plan = NULL;
    isf_status st = isf_gemm_create(&d, &plan);
    if (st == ISF_OK) {
        st = isf_gemm_run(plan, jc->m, o->a.p, jc->lda, o->c.p, jc->ldc, 0);
    }
    isf_gemm_destroy(plan);
    return st;
}

/* A, B and a plan's bias: the job's own buffers, or, under guard pages, copies ending at a PROT_NONE page. */
static void place_inputs(const job *j, const job_case *jc, operands *o) {
    size_t in_bytes = isf_ops[j->op].in_bytes, bias_span = j->flags & BIAS_FLAG ? jc->n * isf_ops[j->op].out_bytes : 0;
    o->a_span = span_elems(jc->m, jc->k, jc->lda) * in_bytes;
    o->b_span = span_elems(jc->k, jc->n, jc->ldb) * in_bytes;
    if (!(j->flags & GUARD_PAGES_FLAG)) {
        o->a.p = (unsigned char *)j->a, o->b.p = (unsigned char *)j->b, o->bias.p = (unsigned char *)j->bias;
        return;
    }
    memcpy(region_open(&o->a, 0, o->a_span, 0, 1), j->a, o->a_span);
    memcpy(region_open(&o->b, 0, o->b_span, 0, 1), j->b, o->b_span);
    region_seal(&o->a), region_seal(&o->b);
    if (bias_span) {
        memcpy(region_open(&o->bias, 0, bias_span, 0, 1), j->bias, bias_span);
        region_seal(&o->bias);
    }
}

static void write_sentinels(FILE *out, size_t bytes) {
    static unsigned char fill[4096];
    memset(fill, SENTINEL, sizeof fill);
    for (size_t chunk; bytes; bytes -= chunk) {
        chunk = bytes < sizeof fill ? bytes : sizeof fill;
        fwrite(fill, 1, chunk, out);
    }
}

/* Status, leading guard, the m×ldc block, trailing guard (see the format at the top). */
static void write_result(const job *j, const job_case *jc, const operands *o, int32_t st) {
    size_t out_bytes = isf_ops[j->op].out_bytes, guard = guard_bytes(jc, out_bytes);
    size_t beyond = jc->m * jc->ldc * out_bytes - o->c_span + guard; /* last row's padding + trailing guard */
    fwrite(&st, sizeof st, 1, j->out);
    fwrite(o->c.p - guard, 1, guard + o->c_span, j->out);
    if (o->c.mapped) {
        write_sentinels(j->out, beyond);
    } else {
        fwrite(o->c.p + o->c_span, 1, beyond, j->out);
    }
}

/* Run case i; write its result when `write`. */
static void run_case(const job *j, uint32_t i, int write) {
    const job_case *jc = &j->cases_table[i];
    int guard_pages = (j->flags & GUARD_PAGES_FLAG) != 0;
    size_t out_bytes = isf_ops[j->op].out_bytes, guard = guard_bytes(jc, out_bytes);
    operands o = {0};
    place_inputs(j, jc, &o);
    o.c_span = span_elems(jc->m, jc->n, jc->ldc) * out_bytes;
    size_t beyond = jc->m * jc->ldc * out_bytes - o.c_span + guard;
    unsigned char *c = region_open(&o.c, guard, o.c_span, beyond, guard_pages);
    memset(c - guard, SENTINEL, guard + o.c_span + (guard_pages ? 0 : beyond));
    int32_t st = j->flags & PACKED_FLAG ? run_packed(j, jc, &o)
                 : j->flags & PLAN_FLAG
                     ? run_plan(j, jc, &o)
                     : isf_gemm_op((isf_op)j->op, jc->m, jc->n, jc->k, o.a.p, jc->lda, o.b.p, jc->ldb, c, jc->ldc);
    if (j->probe != NULL) {
        probe(&o, j->probe);
    }
    if (write) {
        write_result(j, jc, &o, st);
    }
    region_close(&o.c);
    if (guard_pages) {
        region_close(&o.a), region_close(&o.b);
        if (o.bias.base != NULL) {
            region_close(&o.bias);
        }
    }
    if (j->flags & PACKED_FLAG && o.packed.base != NULL) {
        region_close(&o.packed);
    }
}

static void run_all(const job *j) {
    for (uint32_t i = 0; i < j->cases; i++) {
        run_case(j, i, 1);
    }
}

static void apply_choices(const job *j) {
    isf_set_feature_mask(j->mask);
    isf_status st = j->kernel != NULL ? isf_select_kernel((isf_op)j->op, j->kernel) : ISF_OK;
    if (st != ISF_OK) {
        fprintf(stderr, "gemm_runner: kernel=%s: %s\n", j->kernel,
                st == ISF_ERR_UNSUPPORTED ? "its features are not active here" : "no such kernel of the op");
        exit(2);
    }
}

#if defined(__aarch64__)
/* Per thread: each thread keeps its own SVE vector length. */
static void set_vector_bytes(unsigned bytes) {
    int got = prctl(PR_SVE_SET_VL, bytes, 0, 0, 0);
    if (got < 0 || (unsigned)(got & PR_SVE_VL_LEN_MASK) != bytes) {
        fprintf(stderr, "gemm_runner: prctl(PR_SVE_SET_VL, %u) gave %d\n", bytes, got);
        exit(2);
    }
}

static void *thread_main(void *arg) {
    const job *j = arg;
    set_vector_bytes(j->thread_vl);
    run_all(j);
    return NULL;
}

/* Warm the library up at one vector length, then run the batch on a thread at another. The main thread's length
 * must be set before the first library call (the feature mask included): that call initialises the library. */
static void run_at_vector_lengths(job *j, unsigned main_vl, unsigned thread_vl) {
    set_vector_bytes(main_vl);
    apply_choices(j);
    if (j->cases) {
        run_case(j, 0, 0);
    }
    j->thread_vl = thread_vl;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, j) != 0 || pthread_join(t, NULL) != 0) {
        die("pthread failed");
    }
}
#else
static void run_at_vector_lengths(job *j, unsigned main_vl, unsigned thread_vl) {
    (void)j, (void)main_vl, (void)thread_vl;
    die("vl= needs SVE: aarch64 only");
}
#endif

static int probe_is_valid(const job *j) {
    const char *name = j->probe + (j->probe[0] == '-');
    int known = !strcmp(name, "a") || !strcmp(name, "b") || !strcmp(name, "c");
    int packed = !strcmp(name, "packed") && (j->flags & PACKED_FLAG);
    return (j->flags & GUARD_PAGES_FLAG) && (known || packed);
}

/* Flags that go together: packed or plan, an epilogue only with a plan, a clamp only for float C. */
static int flags_are_valid(uint32_t op, uint32_t flags) {
    uint32_t known = PACKED_FLAG | GUARD_PAGES_FLAG | PLAN_FLAG | BIAS_FLAG | CLAMP_FLAG;
    int plan = (flags & PLAN_FLAG) != 0, epilogue = (flags & (BIAS_FLAG | CLAMP_FLAG)) != 0;
    int int_clamp = (flags & CLAMP_FLAG) && isf_ops[op].out_kind == ISF_ELEM_INT;
    return !(flags & ~known) && !(plan && (flags & PACKED_FLAG)) && (plan || !epilogue) && !int_clamp;
}

/* The bias and bounds after B, when the flags say so. Returns the bias's bytes. */
static uint64_t read_epilogue(FILE *in, job *j) {
    uint64_t bias_bytes = 0;
    if (j->flags & BIAS_FLAG) {
        if (fread(&bias_bytes, sizeof bias_bytes, 1, in) != 1) {
            die("short job file");
        }
        j->bias = read_exact(in, bias_bytes);
    }
    float bounds[2];
    if (j->flags & CLAMP_FLAG) {
        if (fread(bounds, sizeof bounds, 1, in) != 1) {
            die("short job file");
        }
        j->lo = bounds[0], j->hi = bounds[1];
    }
    return bias_bytes;
}

static void read_job(FILE *in, job *j) {
    uint32_t head[4];
    uint64_t sizes[2];
    if (fread(head, sizeof head, 1, in) != 1 || memcmp(head, "ISFJ", 4) != 0 ||
        fread(sizes, sizeof sizes, 1, in) != 1) {
        die("not a job file");
    }
    j->op = head[1], j->cases = head[2], j->flags = head[3];
    if (j->op >= ISF_OP_COUNT || !flags_are_valid(j->op, j->flags)) {
        die("unknown op or flags in the job file");
    }
    j->a = read_exact(in, sizes[0]), j->b = read_exact(in, sizes[1]);
    uint64_t bias_bytes = read_epilogue(in, j);
    j->cases_table = read_exact(in, j->cases * sizeof *j->cases_table);
    for (uint32_t i = 0; (j->flags & BIAS_FLAG) && i < j->cases; i++) {
        if (j->cases_table[i].n * isf_ops[j->op].out_bytes > bias_bytes) {
            die("the bias is shorter than a case's n");
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        die("usage: gemm_runner JOB OUT [ALLOWED_MASK] [kernel=NAME] [vl=MAIN:THREAD] [probe=[-]a|b|c|packed]");
    }
    job j = {.mask = UINT32_MAX};
    unsigned main_vl = 0, thread_vl = 0;
    for (int i = 3; i < argc; i++) {
        if (!strncmp(argv[i], "vl=", 3)) {
            if (sscanf(argv[i] + 3, "%u:%u", &main_vl, &thread_vl) != 2) {
                die("vl=MAIN:THREAD, in bytes");
            }
        } else if (!strncmp(argv[i], "kernel=", 7)) {
            j.kernel = argv[i] + 7;
        } else if (!strncmp(argv[i], "probe=", 6)) {
            j.probe = argv[i] + 6;
        } else {
            j.mask = (uint32_t)strtoul(argv[i], NULL, 0);
        }
    }
    FILE *in = fopen(argv[1], "rb");
    j.out = fopen(argv[2], "wb");
    if (in == NULL || j.out == NULL) {
        perror("gemm_runner");
        return 2;
    }
    read_job(in, &j);
    if (j.probe != NULL && !probe_is_valid(&j)) {
        die("probe=[-]a|b|c|packed needs a guard-page job (and packed a packed one)");
    }
    if (main_vl) {
        run_at_vector_lengths(&j, main_vl, thread_vl);
    } else {
        apply_choices(&j);
        run_all(&j);
    }
    const char *name = isf_kernel_name((isf_op)j.op);
    const isf_kernel *selected = isf_selected_kernel((isf_op)j.op);
    /* The tests' model of the driver (plan_kernels) needs the vector length the selected kernel's NR scales with. */
    size_t vector_bytes = selected != NULL ? isf_kernel_vector_bytes(selected) : 0;
    printf("{\"kernel\": \"%s\", \"active\": %u, \"vector_bytes\": %zu}\n", name ? name : "", isf_active_features(),
           vector_bytes);
    fclose(j.out);
    fclose(in);
    free((void *)j.a), free((void *)j.b), free((void *)j.bias), free((void *)j.cases_table);
    return 0;
}
