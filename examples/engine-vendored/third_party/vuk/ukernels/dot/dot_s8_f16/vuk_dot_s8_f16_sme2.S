// (a · b) × scale rounded to binary16 with SME2: multi-vector SDOT into the ZA array, four vectors of a and b
// (4 × SVL bytes) a step, the tail by a predicate-as-counter. A normal call: streaming mode and ZA are entered here
// and left before the return (nothing streaming is asked of the caller); d8-d15, which smstart and smstop zero, are
// kept on the stack. Inside the streaming region only SME and streaming SVE (no NEON: no FEAT_SME_FA64 needed). Any
// SVL from 128 to 2048 bits. n ≤ 1024 keeps the sum exact in fp32; it is rounded to binary16, then scaled in fp32 and
// rounded once more (the product of two binary16 values is exact in fp32).
// uint16_t vuk_dot_s8_f16_sme2(const int8_t *a, const int8_t *b, size_t n, uint16_t scale)
    .text
    .p2align 4
    .global vuk_dot_s8_f16_sme2
    .type vuk_dot_s8_f16_sme2, %function
vuk_dot_s8_f16_sme2:
    stp     d8, d9, [sp, #-64]!
    stp     d10, d11, [sp, #16]
    stp     d12, d13, [sp, #32]
    stp     d14, d15, [sp, #48]
    smstart                                     // streaming mode and ZA on
    zero    {za}
    mov     w8, #0                              // the ZA vector of each of the four groups
    mov     x9, #0                              // i
    rdsvl   x10, #4                             // bytes a step: 4 × SVL
    cmp     x9, x2
    b.hs    2f
1:  whilelt pn8.b, x9, x2, vlx4                 // bytes i … min(i + 4 × SVL, n), the rest zero
    ld1b    {z0.b-z3.b}, pn8/z, [x0, x9]
    ld1b    {z4.b-z7.b}, pn8/z, [x1, x9]
    sdot    za.s[w8, 0, vgx4], {z0.b-z3.b}, {z4.b-z7.b}
    add     x9, x9, x10
    cmp     x9, x2
    b.lo    1b
2:  mova    {z0.d-z3.d}, za.d[w8, 0, vgx4]      // the four partial-sum vectors
    add     z0.s, z0.s, z1.s
    add     z2.s, z2.s, z3.s
    add     z0.s, z0.s, z2.s
    ptrue   p0.s
    saddv   d0, p0, z0.s                        // the dot, sign-extended
    fmov    x10, d0
    smstop                                      // streaming mode and ZA off
    ldp     d10, d11, [sp, #16]
    ldp     d12, d13, [sp, #32]
    ldp     d14, d15, [sp, #48]
    ldp     d8, d9, [sp], #64
    scvtf   s0, w10                             // exact: |dot| ≤ 2^24
    fcvt    h0, s0                              // the dot in binary16
    fcvt    s0, h0
    fmov    s1, w3                              // the scale's bits
    fcvt    s1, h1
    fmul    s0, s0, s1                          // exact
    fcvt    h0, s0                              // the one rounding of the product
    fmov    w0, s0
    ret
    .size vuk_dot_s8_f16_sme2, .-vuk_dot_s8_f16_sme2
