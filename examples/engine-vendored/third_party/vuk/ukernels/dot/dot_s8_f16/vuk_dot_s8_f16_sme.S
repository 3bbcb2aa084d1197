// (a · b) × scale rounded to binary16 with SME: SMOPA, the 4-way int8 outer product, of SVL bytes of a and b a step
// into the 32-bit tile ZA0.S, whose element [r][c] gains Σ_{j<4} a[4r + j] · b[4c + j]: its diagonal holds the
// partial dot products of four bytes each, and the dot is the tile's trace. The tail by a predicate (whilelt). The
// trace is read one row at a time: MOVA of row r merged into z3 under a predicate of lane r alone (PNEXT walks
// them), then SADDV. A normal call: streaming mode and ZA are entered here and left before the return; d8-d15,
// which smstart and smstop zero, are kept on the stack. Only SME1 and streaming SVE inside the streaming region (no
// NEON: no FEAT_SME_FA64 needed). Any SVL from 128 to 2048 bits. The scaling as vuk_dot_s8_f16_sme2's.
// uint16_t vuk_dot_s8_f16_sme(const int8_t *a, const int8_t *b, size_t n, uint16_t scale)
    .text
    .p2align 4
    .global vuk_dot_s8_f16_sme
    .type vuk_dot_s8_f16_sme, %function
vuk_dot_s8_f16_sme:
    stp     d8, d9, [sp, #-64]!
    stp     d10, d11, [sp, #16]
    stp     d12, d13, [sp, #32]
    stp     d14, d15, [sp, #48]
    smstart                                     // streaming mode and ZA on
    zero    {za}
    mov     x9, #0                              // i
    rdsvl   x10, #1                             // bytes a step: SVL
1:  whilelt p0.b, x9, x2                        // bytes i … min(i + SVL, n); eq: none (i ≥ n)
    b.eq    2f
    ld1b    {z0.b}, p0/z, [x0, x9]
    ld1b    {z1.b}, p0/z, [x1, x9]
    smopa   za0.s, p0/m, p0/m, z0.b, z1.b
    add     x9, x9, x10
    b       1b
2:  ptrue   p1.s
    pfalse  p2.b
    mov     z3.s, #0
    mov     w12, #0                             // row r
3:  pnext   p2.s, p1, p2.s                      // lane r alone; eq: none (past the last row)
    b.eq    4f
    mova    z3.s, p2/m, za0h.s[w12, 0]          // z3[r] = ZA0.S[r][r]
    add     w12, w12, #1
    b       3b
4:  saddv   d0, p1, z3.s                        // the trace: the dot, sign-extended
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
    .size vuk_dot_s8_f16_sme, .-vuk_dot_s8_f16_sme
