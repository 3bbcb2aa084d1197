// tile[4][8] = bias + lhs[4][k] · panel: one 8-column panel of vuk_rhs_pack_f32p8 (8 bias values, then k rows of 8).
// void vuk_kernel_f32p8_4x8(const float *lhs, size_t lhs_stride_bytes, const float *panel, size_t k, float *tile)
    .text
    .p2align 4
    .global vuk_kernel_f32p8_4x8
    .type vuk_kernel_f32p8_4x8, %function
vuk_kernel_f32p8_4x8:
    ld1     {v16.4s, v17.4s}, [x2], #32
    mov     v18.16b, v16.16b
    mov     v19.16b, v17.16b
    mov     v20.16b, v16.16b
    mov     v21.16b, v17.16b
    mov     v22.16b, v16.16b
    mov     v23.16b, v17.16b
    add     x5, x0, x1
    add     x6, x5, x1
    add     x7, x6, x1
    cbz     x3, 2f
1:  ld1     {v0.4s, v1.4s}, [x2], #32
    ldr     s2, [x0], #4
    ldr     s3, [x5], #4
    ldr     s4, [x6], #4
    ldr     s5, [x7], #4
    fmla    v16.4s, v0.4s, v2.s[0]
    fmla    v17.4s, v1.4s, v2.s[0]
    fmla    v18.4s, v0.4s, v3.s[0]
    fmla    v19.4s, v1.4s, v3.s[0]
    fmla    v20.4s, v0.4s, v4.s[0]
    fmla    v21.4s, v1.4s, v4.s[0]
    fmla    v22.4s, v0.4s, v5.s[0]
    fmla    v23.4s, v1.4s, v5.s[0]
    subs    x3, x3, #1
    b.ne    1b
2:  st1     {v16.4s, v17.4s, v18.4s, v19.4s}, [x4], #64
    st1     {v20.4s, v21.4s, v22.4s, v23.4s}, [x4]
    ret
    .size vuk_kernel_f32p8_4x8, .-vuk_kernel_f32p8_4x8
