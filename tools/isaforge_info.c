/* isaforge-info: what this CPU has, what is allowed, and which kernel each op runs, as JSON. */
#include <stdio.h>

#include "isf_internal.h"

static const char *const op_names[] = {"gemm_f32", "gemm_f16", "gemm_bf16", "gemm_s8"};

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
    for (size_t op = 0; op < sizeof op_names / sizeof *op_names; op++) {
        const char *name = isf_kernel_name((isf_op)op);
        printf("%s\"%s\": ", op ? ", " : "", op_names[op]);
        name != NULL ? printf("\"%s\"", name) : printf("null");
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

int main(void) {
    printf("{\n  \"arch\": \"%s\",\n  \"detected\": ", isf_arch_name);
    print_feature_list(isf_cpu_features());
    printf(",\n  \"active\": ");
    print_feature_list(isf_active_features());
    printf(",\n  \"detect_source\": \"%s\",\n", isf_detect_source());
    print_kernels();
    print_variants();
    printf("}\n");
    return 0;
}
