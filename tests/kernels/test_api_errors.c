/* Bad input never crashes and never touches C: NULLs, short leading dimensions, size_t overflow; empty sizes are
 * fine and k = 0 writes zeros. Exit status is the number of failed checks (meson test reads it). */
#include "test_util.h"

static int untouched(const float *c, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (c[i] != -7.0f) {
            return 0;
        }
    }
    return 1;
}

static void reset(float *c, size_t len) {
    for (size_t i = 0; i < len; i++) {
        c[i] = -7.0f;
    }
}

static void f32_errors(void) {
    float a[16] = {1}, b[16] = {1}, c[16];
    reset(c, 16);
    CHECK(isf_gemm_f32(2, 2, 2, NULL, 2, b, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_f32(2, 2, 2, a, 2, NULL, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_f32(2, 2, 2, a, 2, b, 2, NULL, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_f32(2, 2, 3, a, 2, b, 2, c, 2) == ISF_ERR_INVALID_ARG); /* lda < k */
    CHECK(isf_gemm_f32(2, 3, 2, a, 2, b, 2, c, 3) == ISF_ERR_INVALID_ARG); /* ldb < n */
    CHECK(isf_gemm_f32(2, 3, 2, a, 2, b, 3, c, 2) == ISF_ERR_INVALID_ARG); /* ldc < n */
    /* Leading dimensions are checked whatever the sizes: an empty A, B or C does not excuse a short one. */
    CHECK(isf_gemm_f32(0, 2, 3, a, 2, b, 2, c, 2) == ISF_ERR_INVALID_ARG); /* m = 0, lda < k */
    CHECK(isf_gemm_f32(0, 3, 2, a, 2, b, 3, c, 2) == ISF_ERR_INVALID_ARG); /* m = 0, ldc < n */
    CHECK(isf_gemm_f32(2, 3, 0, a, 0, b, 2, c, 3) == ISF_ERR_INVALID_ARG); /* k = 0, ldb < n */
    CHECK(isf_gemm_f32(SIZE_MAX / 2, 2, 2, a, SIZE_MAX / 2, b, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_f32(2, 2, SIZE_MAX / 4 + 1, a, SIZE_MAX / 4 + 1, b, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_f32(3, SIZE_MAX / 8, 1, a, 1, b, SIZE_MAX / 8, c, SIZE_MAX / 8) == ISF_ERR_INVALID_ARG);
    CHECK(untouched(c, 16));
    CHECK(isf_gemm_f32(0, 2, 2, NULL, 2, b, 2, NULL, 2) == ISF_OK);
    CHECK(isf_gemm_f32(2, 0, 2, a, 2, NULL, 0, NULL, 0) == ISF_OK);
    CHECK(untouched(c, 16));
    CHECK(isf_gemm_f32(2, 3, 0, NULL, 0, NULL, 3, c, 4) == ISF_OK);
    CHECK(c[0] == 0.0f && c[2] == 0.0f && c[3] == -7.0f && c[4] == 0.0f && c[6] == 0.0f && c[7] == -7.0f);
}

static void s8_errors(void) {
    int8_t a[16] = {1}, b[16] = {1};
    int32_t c[16];
    memset(c, 0x5a, sizeof c);
    CHECK(isf_gemm_s8(2, 2, 2, NULL, 2, b, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_s8(2, 2, 2, a, 1, b, 2, c, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_s8(SIZE_MAX, 1, 1, a, 1, b, 1, c, 1) == ISF_ERR_INVALID_ARG);
    CHECK(c[0] == 0x5a5a5a5a && c[15] == 0x5a5a5a5a);
}

static void packed_errors(void) {
    float a[16] = {1}, b[16] = {1}, c[16];
    size_t bytes = isf_packed_b_size(ISF_OP_GEMM_F32, 4, 4);
    static unsigned char packed[1 << 16];
    CHECK(bytes > 0 && bytes <= sizeof packed);
    CHECK(isf_packed_b_size((isf_op)42, 4, 4) == 0);
    CHECK(isf_packed_b_size(ISF_OP_GEMM_F32, SIZE_MAX, SIZE_MAX / 2) == 0);
    CHECK(isf_pack_b(ISF_OP_GEMM_F32, 4, 4, NULL, 4, packed, sizeof packed) == ISF_ERR_INVALID_ARG);
    CHECK(isf_pack_b(ISF_OP_GEMM_F32, 4, 4, b, 3, packed, sizeof packed) == ISF_ERR_INVALID_ARG);
    CHECK(isf_pack_b(ISF_OP_GEMM_F32, 4, 4, b, 4, NULL, sizeof packed) == ISF_ERR_INVALID_ARG);
    CHECK(isf_pack_b(ISF_OP_GEMM_F32, 4, 4, b, 4, packed, sizeof packed) == ISF_OK);
    reset(c, 16);
    size_t size = sizeof packed;
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 4, 5, 4, a, 4, packed, size, c, 5) == ISF_ERR_INVALID_ARG); /* n differs */
    CHECK(isf_gemm_packed(ISF_OP_GEMM_S8, 4, 4, 4, a, 4, packed, size, c, 4) == ISF_ERR_INVALID_ARG);  /* op differs */
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 4, 4, 4, a, 4, NULL, size, c, 4) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 4, 4, 4, NULL, 4, packed, size, c, 4) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 4, 4, 4, a, 4, packed, 63, c, 4) == ISF_ERR_INVALID_ARG);   /* no header */
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 4, 4, 4, a, 4, packed, 64, c, 4) == ISF_ERR_INVALID_ARG);   /* no panels */
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 0, 4, 4, a, 3, packed, size, c, 4) == ISF_ERR_INVALID_ARG); /* lda < k */
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 0, 4, 4, a, 4, packed, size, c, 3) == ISF_ERR_INVALID_ARG); /* ldc < n */
    CHECK(untouched(c, 16));
    /* Packed for one kernel, used after the cap chose another: refused, C untouched. */
    const char *before = isf_kernel_name(ISF_OP_GEMM_F32);
    isf_set_feature_mask(0);
    int changed = strcmp(before, isf_kernel_name(ISF_OP_GEMM_F32)) != 0;
    isf_status st = isf_gemm_packed(ISF_OP_GEMM_F32, 4, 4, 4, a, 4, packed, size, c, 4);
    CHECK(changed ? st == ISF_ERR_UNSUPPORTED && untouched(c, 16) : st == ISF_OK);
    isf_set_feature_mask(UINT32_MAX);
    reset(c, 16);
    CHECK(isf_gemm_packed(ISF_OP_GEMM_F32, 4, 4, 4, a, 4, packed, size, c, 4) == ISF_OK && c[0] == 1.0f &&
          c[1] == 0.0f);
}

static void f16_bf16_errors(void) {
    uint16_t a[16] = {0x3c00}, b[16] = {0x3c00}, c16[16];
    float c32[16];
    memset(c16, 0x77, sizeof c16);
    reset(c32, 16);
    CHECK(isf_gemm_f16(2, 2, 2, a, 2, NULL, 2, c16, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_bf16(2, 2, 2, a, 2, b, 1, c32, 2) == ISF_ERR_INVALID_ARG);
    CHECK(isf_gemm_f16(SIZE_MAX / 2, 2, 2, a, SIZE_MAX / 2, b, 2, c16, 2) == ISF_ERR_INVALID_ARG);
    CHECK(c16[0] == 0x7777 && untouched(c32, 16));
    CHECK(isf_gemm_f16(1, 1, 1, a, 1, b, 1, c16, 1) == ISF_OK && c16[0] == 0x3c00);    /* 1·1 = 1 */
    CHECK(isf_gemm_bf16(1, 1, 1, b, 1, b, 1, c32, 1) == ISF_OK && c32[0] == 0x1p-14f); /* 0x3c00 as bf16 */
}

/* Dispatch's automatic choice is the first runnable kernel in isf_kernel_info's order. */
static int is_first_runnable(isf_op op, const char *name) {
    isf_kernel_desc d;
    for (size_t i = 0; isf_kernel_info(op, i, &d) == ISF_OK; i++) {
        if (d.runnable) {
            return strcmp(d.name, name) == 0;
        }
    }
    return 0;
}

/* The features allowed at start-up: detection less ISAFORGE_DISABLE, which `isaforge test-qemu`'s cap walk sets for
 * the whole suite. Lifting isf_set_feature_mask's cap gives back these, not every detected feature. */
static uint32_t startup_features;

/* A kernel that needs a feature, selected by name: refused under a cap that excludes it, run once allowed, left for
 * the automatic choice while a later cap excludes it, and given back when the cap lifts; NULL restores dispatch. */
static void select_by_name(void) {
    isf_kernel_desc d;
    CHECK(isf_kernel_count((isf_op)99) == 0 && isf_kernel_info((isf_op)99, 0, &d) == ISF_ERR_INVALID_ARG);
    CHECK(isf_kernel_info(ISF_OP_GEMM_F32, isf_kernel_count(ISF_OP_GEMM_F32), &d) == ISF_ERR_INVALID_ARG);
    CHECK(isf_kernel_info(ISF_OP_GEMM_F32, 0, NULL) == ISF_ERR_INVALID_ARG);
    CHECK(isf_select_kernel(ISF_OP_GEMM_F32, "gemm_f32_1x1_nope") == ISF_ERR_INVALID_ARG);
    CHECK(isf_select_kernel((isf_op)99, NULL) == ISF_ERR_INVALID_ARG);
    CHECK(isf_op_name(ISF_OP_GEMM_S8) != NULL && strcmp(isf_op_name(ISF_OP_GEMM_S8), "gemm_s8") == 0);
    CHECK(isf_op_name((isf_op)99) == NULL);
    for (int op = 0; op < ISF_OP_COUNT; op++) {
        size_t n = isf_kernel_count((isf_op)op);
        CHECK(n >= 1 && isf_kernel_info((isf_op)op, n - 1, &d) == ISF_OK && d.required == 0); /* ref comes last */
        CHECK(is_first_runnable((isf_op)op, isf_kernel_name((isf_op)op)));
        for (size_t i = 0; i < n && isf_kernel_info((isf_op)op, i, &d) == ISF_OK; i++) {
            if (d.required == 0 || (d.required & ~startup_features) != 0) {
                continue;
            }
            CHECK(isf_set_feature_mask(0) == ISF_OK && isf_select_kernel((isf_op)op, d.name) == ISF_ERR_UNSUPPORTED);
            CHECK(isf_set_feature_mask(UINT32_MAX) == ISF_OK && isf_select_kernel((isf_op)op, d.name) == ISF_OK);
            CHECK(strcmp(isf_kernel_name((isf_op)op), d.name) == 0);
            CHECK(isf_set_feature_mask(0) == ISF_OK && strstr(isf_kernel_name((isf_op)op), "_ref") != NULL);
            CHECK(isf_set_feature_mask(UINT32_MAX) == ISF_OK && strcmp(isf_kernel_name((isf_op)op), d.name) == 0);
            CHECK(isf_select_kernel((isf_op)op, NULL) == ISF_OK);
            CHECK(is_first_runnable((isf_op)op, isf_kernel_name((isf_op)op)));
            break;
        }
    }
}

static void api_errors(void) {
    CHECK(isf_kernel_name((isf_op)99) == NULL);
    CHECK((isf_active_features() & ~isf_cpu_features()) == 0);
    CHECK(isf_set_feature_mask(0) == ISF_OK && isf_active_features() == 0);
    CHECK(isf_kernel_name(ISF_OP_GEMM_F32) != NULL && strstr(isf_kernel_name(ISF_OP_GEMM_F32), "_ref") != NULL);
    CHECK(isf_set_feature_mask(UINT32_MAX) == ISF_OK && isf_active_features() == startup_features);
}

int main(void) {
    startup_features = isf_active_features();
    f32_errors();
    s8_errors();
    packed_errors();
    f16_bf16_errors();
    api_errors();
    select_by_name();
    return finish();
}
