/* isaforge-info: what this CPU has, what is allowed, and which kernel each op runs, as JSON.
 *
 * --check (what `meson test` runs): after the JSON, verify that detection, caps and dispatch agree with each other
 * and with the generated tables, and run one small GEMM per op through the public API against a naive loop. The
 * first problem is reported as one line on stderr and the exit status is 1, so a wrong choice or a wrong result
 * fails the test instead of being printed and ignored.
 * --expect-kernel <op>=<name> (with --check, repeatable): also require that <op> runs <name>, for a CI runner that
 * knows its CPU. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isf_elements.h"

static void print_feature_list(uint32_t mask) {
    const char *sep = "";
    putchar('[');
    for (size_t i = 0; i < isf_feature_count; i++) {
        if (mask & isf_features[i].bit) {
            printf("%s\"%s\"", sep, isf_features[i].name);
            sep = ", ";
        }
    }
    putchar(']');
}

static void print_kernels(void) {
    printf("  \"kernels\": {");
    for (size_t op = 0; op < ISF_OP_COUNT; op++) {
        const char *name = isf_kernel_name((isf_op)op);
        printf("%s\"%s\": ", op ? ", " : "", isf_ops[op].name);
        name != NULL ? printf("\"%s\"", name) : printf("null");
    }
    printf("},\n");
}

/* The kernels each op can run now, most preferred first (what ISAFORGE_KERNELS and isf_select_kernel accept). */
static void print_available(void) {
    printf("  \"available\": {");
    for (size_t op = 0; op < ISF_OP_COUNT; op++) {
        printf("%s\"%s\": [", op ? ", " : "", isf_ops[op].name);
        const char *sep = "";
        isf_kernel_desc d;
        for (size_t i = 0; isf_kernel_info((isf_op)op, i, &d) == ISF_OK; i++) {
            if (d.runnable) {
                printf("%s\"%s\"", sep, d.name);
                sep = ", ";
            }
        }
        printf("]");
    }
    printf("},\n");
}

static void print_variants(void) {
    printf("  \"variants\": {");
    for (size_t i = 0; i < isf_variant_count; i++) {
        printf("%s\"%s\": ", i ? ", " : "", isf_variants[i].name);
        print_feature_list(isf_variants[i].required);
    }
    printf("}\n");
}

static void print_json(void) {
    printf("{\n  \"arch\": \"%s\",\n  \"detected\": ", isf_arch_name);
    print_feature_list(isf_cpu_features());
    printf(",\n  \"active\": ");
    print_feature_list(isf_active_features());
    printf(",\n  \"detect_source\": \"%s\",\n", isf_detect_source());
    printf("  \"sve_vector_length\": %zu,\n  \"streaming_vector_length\": %zu,\n", isf_sve_vector_length(),
           isf_streaming_vector_length());
    printf("  \"l1d_bytes\": %zu,\n", isf_l1d_bytes()); /* what the driver's Kc is planned for */
    print_kernels();
    print_available();
    print_variants();
    printf("}\n");
}

/* -- --check ------------------------------------------------------------------------------------------------- */

/* One line on stderr, then exit 1: the first inconsistency is the one to fix. */
static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fputs("isaforge-info: check failed: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Feature names of `mask`, space-separated, for messages. */
static const char *feature_names(uint32_t mask) {
    static char buf[256];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < isf_feature_count && used < sizeof buf; i++) {
        if (mask & isf_features[i].bit) {
            int n = snprintf(buf + used, sizeof buf - used, "%s%s", used ? " " : "", isf_features[i].name);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    return buf;
}

static void check_implications(const char *what, uint32_t mask) {
    for (size_t i = 0; i < isf_feature_count; i++) {
        const isf_feature_info *f = &isf_features[i];
        uint32_t missing = f->implied & ~mask;
        if ((mask & f->bit) && missing) {
            fail("%s feature %s lacks %s, which it implies", what, f->name, feature_names(missing));
        }
    }
}

static void check_selection(isf_op op, uint32_t active, const char *expected) {
    const char *name = isf_ops[op].name;
    const isf_kernel *sel = isf_selected_kernel(op);
    if (sel == NULL) {
        fail("%s has no kernel", name);
    }
    const char *public_name = isf_kernel_name(op);
    if (public_name == NULL || strcmp(public_name, sel->name) != 0) {
        fail("%s: isf_kernel_name says %s, the selected kernel is %s", name, public_name ? public_name : "(null)",
             sel->name);
    }
    if (sel->required & ~active) {
        fail("%s runs %s, which needs %s (not active)", name, sel->name, feature_names(sel->required & ~active));
    }
    const isf_kernel *best = isf_best_kernel(op, active);
    if (best != NULL && best->rank > sel->rank && isf_named_kernel(op) != sel) {
        fail("%s runs %s, but %s is built, preferred and its features are active", name, sel->name, best->name);
    }
    if (expected != NULL && strcmp(expected, sel->name) != 0) {
        fail("%s runs %s, expected %s (--expect-kernel)", name, sel->name, expected);
    }
}

/* One GEMM per op, small enough to be exact in every precision: inputs are integers in [-3, 3] and k = 9, so every
 * partial sum is an integer of magnitude ≤ 81 (exact in binary16, bfloat16 inputs and fp32). Leading dimensions
 * exceed the widths; A's and B's padding holds 100s that would show in C if read, C's padding and the guard after
 * C's end must keep their fill byte. */
enum { M = 5, N = 7, K = 9, LDA = K + 2, LDB = N + 1, LDC = N + 3, GUARD = 16, FILL = 0x5a, PAD = 100 };

static int a_value(size_t i, size_t p, unsigned op) { return (int)((i * 3 + p * 5 + op) % 7) - 3; }
static int b_value(size_t p, size_t j, unsigned op) { return (int)((p * 2 + j * 3 + op + 1) % 7) - 3; }

static void check_gemm(isf_op op) {
    const char *name = isf_ops[op].name;
    const size_t in = isf_ops[op].in_bytes, out = isf_ops[op].out_bytes;
    /* Aligned for every element type; sizes are fixed and small. */
    static _Alignas(16) unsigned char a[M * LDA * 4], b[K * LDB * 4], c[(M * LDC + GUARD) * 4];
    if (in > 4 || out > 4) {
        fail("%s: element sizes %zu/%zu exceed the check's buffers", name, in, out);
    }
    for (size_t i = 0; i < M; i++) {
        for (size_t p = 0; p < LDA; p++) {
            isf_put_input(op, a, i * LDA + p, p < K ? a_value(i, p, op) : PAD);
        }
    }
    for (size_t p = 0; p < K; p++) {
        for (size_t j = 0; j < LDB; j++) {
            isf_put_input(op, b, p * LDB + j, j < N ? b_value(p, j, op) : PAD);
        }
    }
    const size_t c_elems = M * LDC + GUARD;
    memset(c, FILL, c_elems * out);
    isf_status st = isf_gemm_op(op, M, N, K, a, LDA, b, LDB, c, LDC);
    if (st != ISF_OK) {
        fail("%s (%s) returned status %d for %dx%dx%d", name, isf_kernel_name(op), (int)st, M, N, K);
    }
    for (size_t idx = 0; idx < c_elems; idx++) {
        size_t i = idx / LDC, j = idx % LDC;
        if (i < M && j < N) {
            int want = 0;
            for (size_t p = 0; p < K; p++) {
                want += a_value(i, p, op) * b_value(p, j, op);
            }
            double got = isf_get_output(op, c, idx);
            if (got != (double)want) {
                fail("%s (%s): C[%zu][%zu] = %g, naive loop gives %d", name, isf_kernel_name(op), i, j, got, want);
            }
            continue;
        }
        for (size_t byte = 0; byte < out; byte++) {
            if (c[idx * out + byte] != FILL) {
                const char *where = i < M ? "padding (ldc > n)" : "guard after C";
                fail("%s (%s) wrote C's %s at element %zu", name, isf_kernel_name(op), where, idx);
            }
        }
    }
}

static int usage(void) {
    fprintf(stderr, "usage: isaforge-info [--check [--expect-kernel <op>=<kernel>]...]\n");
    return 2;
}

int main(int argc, char **argv) {
    int check = 0;
    const char *expected[ISF_OP_COUNT] = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--expect-kernel") == 0 && i + 1 < argc) {
            const char *spec = argv[++i], *eq = strchr(spec, '=');
            size_t op = 0;
            while (eq != NULL && op < ISF_OP_COUNT &&
                   !(strlen(isf_ops[op].name) == (size_t)(eq - spec) &&
                     strncmp(isf_ops[op].name, spec, (size_t)(eq - spec)) == 0)) {
                op++;
            }
            if (eq == NULL || op == ISF_OP_COUNT) {
                fprintf(stderr, "isaforge-info: --expect-kernel %s: want <op>=<kernel> with op one of", spec);
                for (size_t i = 0; i < ISF_OP_COUNT; i++) {
                    fprintf(stderr, " %s", isf_ops[i].name);
                }
                fputc('\n', stderr);
                return 2;
            }
            expected[op] = eq + 1;
        } else {
            return usage();
        }
    }
    for (size_t op = 0; op < ISF_OP_COUNT; op++) {
        if (expected[op] != NULL && !check) {
            return usage();
        }
    }
    print_json();
    if (!check) {
        return 0;
    }
    if (isf_op_count != ISF_OP_COUNT) {
        fail("the generated tables have %zu ops, the header %zu: rebuild with a fresh header", isf_op_count,
             (size_t)ISF_OP_COUNT);
    }
    const uint32_t detected = isf_cpu_features(), active = isf_active_features();
    if (active & ~detected) {
        fail("active features %s are not detected", feature_names(active & ~detected));
    }
    check_implications("detected", detected);
    check_implications("active", active);
    for (size_t op = 0; op < ISF_OP_COUNT; op++) {
        check_selection((isf_op)op, active, expected[op]);
        if (isf_ops[op].plain) { /* the quantized ops run through plans only */
            check_gemm((isf_op)op);
        }
    }
    return 0;
}
