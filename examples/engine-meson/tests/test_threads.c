/* The first calls of a process, made by several threads at once (released together by a barrier, before any other
 * call into the engine): every thread gets the right result and sees one choice per op. The dispatch is chosen
 * once under pthread_once and published with atomics, so this holds by construction; the test is there so that a
 * dispatch that is not (a lazy "if (!chosen) chosen = pick();") shows up, e.g. under ThreadSanitizer.
 * `test_engine threads` runs it, in a process of its own. Exit status: the number of failed checks. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "eng_dispatch.h"

#define THREADS 8
#define N 1000

static int8_t a[N], b[N];
static uint16_t x[N];
static pthread_barrier_t start;

struct result {
    int32_t dot;
    uint16_t y[N];
    const char *dot_kernel, *relu_kernel;
};
static struct result results[THREADS];

static void *first_calls(void *arg) {
    struct result *r = arg;
    pthread_barrier_wait(&start);
    r->dot = eng_dot_s8(a, b, N);
    eng_relu_f16((const __fp16 *)(void *)x, (__fp16 *)(void *)r->y, N);
    r->dot_kernel = eng_kernel_name(ENG_OP_DOT_S8);
    r->relu_kernel = eng_kernel_name(ENG_OP_RELU_F16);
    return NULL;
}

int threads_main(void) {
    uint32_t state = 12345;
    for (size_t i = 0; i < N; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = (int8_t)(state >> 24);
        b[i] = (int8_t)(state >> 16);
        x[i] = (uint16_t)(state & 0x3bff); /* finite halves of both signs: no NaN, no infinity */
        x[i] |= (uint16_t)((state >> 8) & 0x8000);
    }
    pthread_t threads[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) {
        if (pthread_create(&threads[t], NULL, first_calls, &results[t]) != 0) {
            fprintf(stderr, "FAIL: pthread_create\n");
            return 1;
        }
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
    }
    pthread_barrier_destroy(&start);

    int failures = 0;
    uint16_t ref[N];
    int32_t dot_ref = eng_dot_s8_1x1_ref(a, b, N);
    eng_relu_f16_1x1_ref((const __fp16 *)(void *)x, (__fp16 *)(void *)ref, N);
    for (int t = 0; t < THREADS; t++) {
        struct result *r = &results[t];
        if (r->dot != dot_ref || memcmp(r->y, ref, sizeof ref) != 0) {
            failures++;
            fprintf(stderr, "FAIL thread %d: wrong result (%s, %s)\n", t, r->dot_kernel, r->relu_kernel);
        }
        if (strcmp(r->dot_kernel, eng_kernel_name(ENG_OP_DOT_S8)) != 0 ||
            strcmp(r->relu_kernel, eng_kernel_name(ENG_OP_RELU_F16)) != 0) {
            failures++;
            fprintf(stderr, "FAIL thread %d: saw %s / %s, the engine chose %s / %s\n", t, r->dot_kernel, r->relu_kernel,
                    eng_kernel_name(ENG_OP_DOT_S8), eng_kernel_name(ENG_OP_RELU_F16));
        }
    }
    printf("%d threads, first calls at once: dot_s8 -> %s, relu_f16 -> %s, %d failed checks\n", THREADS,
           eng_kernel_name(ENG_OP_DOT_S8), eng_kernel_name(ENG_OP_RELU_F16), failures);
    return failures;
}
