/* test_package: link the installed libecm.a (and through it libisaforge) and call both ops once. */
#include <ecm.h>
#include <stdio.h>

int main(void) {
    static const int8_t x[] = {-128, 127, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16, 17, -18, 19};
    static const uint16_t h[] = {0xc000 /* -2 */, 0x3c00 /* 1 */, 0x4800 /* 8 */};
    uint16_t y[3];
    size_t n = sizeof x / sizeof *x;
    int64_t sum = ecm_sumsq_s8(x, n);
    ecm_relu6_f16(h, y, 3);
    printf("ecm test_package: sumsq_s8 kernel = %s, clamp_f16 kernel = %s\n", ecm_kernel_name(ECM_OP_SUMSQ_S8),
           ecm_kernel_name(ECM_OP_CLAMP_F16));
    /* 128^2 + 127^2 + the squares of 3..19 */
    if (sum != 34978 || sum != ecm_sumsq_s8_1x1_ref(x, n) || (y[0] & 0x7fff) != 0 || y[1] != 0x3c00 || y[2] != 0x4600) {
        puts("ecm test_package: FAILED");
        return 1;
    }
    puts("ecm test_package: ok");
    return 0;
}
