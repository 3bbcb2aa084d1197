/* The /proc/cpuinfo fallback, fed real-looking Features lines. A 32-bit process on an arm64 kernel reads the arm64
 * kernel's names ("asimd", "bf16") unless its personality is PER_LINUX32, so on arm both vocabularies must work;
 * on aarch64 only the arm64 one exists. Tokens are whole words: "asimddp" is not "asimd", "neonx" is not "neon".
 * The same source is built for both arches; the expected masks differ by #if __aarch64__.
 * Exit status is the number of failed checks (meson test and pytest read it). */
#include <stdint.h>
#include <stdio.h>

#include "isf_internal.h"

enum {
    NEON = ISF_FEATURE_NEON,
    FP16 = ISF_FEATURE_FP16,
    DOTPROD = ISF_FEATURE_DOTPROD,
    I8MM = ISF_FEATURE_I8MM,
    BF16 = ISF_FEATURE_BF16,
    SVE = ISF_FEATURE_SVE,
    SVE2 = ISF_FEATURE_SVE2,
    SVEI8MM = ISF_FEATURE_SVEI8MM,
    SVEBF16 = ISF_FEATURE_SVEBF16,
};

/* Linux 6.x on a 32-bit Armv8.2 core (or an arm64 kernel with PER_LINUX32): arm names. */
static const char arm32_kernel[] = "half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm "
                                   "fphp asimdhp asimddp asimdbf16 i8mm";
/* arm64 kernel, Cortex-A55. */
static const char a55[] = "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc "
                          "dcpop asimddp";
/* arm64 kernel, Neoverse-N2-like, as read from the file: label, tab and trailing newline included. */
static const char n2[] = "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
                         "jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs "
                         "sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm "
                         "svebf16 i8mm bf16 dgh rng bti\n";
/* The same core behind a hypervisor that hides ID_AA64ZFR0_EL1's I8MM and BF16 fields. */
static const char n2_hidden_zfr0[] = "fp asimd fphp asimdhp asimddp sve sve2 i8mm bf16";
/* Near misses: prefixes, suffixes and words that contain a token. */
static const char near_misses[] = "xasimd asimddp fphp asimdhpx neonx sveaes svei8mmx bf16x i8mm";
/* "sve2" alone is not "sve"; the raw mask has sve2, the closed one cannot. */
static const char sve2_without_sve[] = "fp asimd fphp asimdhp sve2";

static int checks, failures;

static void expect(const char *what, uint32_t got, uint32_t want) {
    checks++;
    if (got != want) {
        failures++;
        fprintf(stderr, "FAIL %s: got 0x%x, want 0x%x\n", what, (unsigned)got, (unsigned)want);
    }
}

/* Raw mask (what the tokens say) and closed mask (what detection reports: implications applied). */
static void line_case(const char *what, const char *line, uint32_t raw, uint32_t closed) {
    uint32_t got = isf_features_from_cpuinfo_line(line);
    expect(what, got, raw);
    char closed_what[96];
    snprintf(closed_what, sizeof closed_what, "%s (closed)", what);
    expect(closed_what, isf_close_features(got), closed);
}

int main(void) {
#if defined(__aarch64__)
    /* No "asimd" and "asimdbf16" is not "bf16": the arm vocabulary is not the aarch64 one. */
    line_case("32-bit kernel line", arm32_kernel, FP16 | DOTPROD | I8MM, 0);
    line_case("Cortex-A55", a55, NEON | FP16 | DOTPROD, NEON | FP16 | DOTPROD);
    const uint32_t n2_all = NEON | FP16 | DOTPROD | I8MM | BF16 | SVE | SVE2 | SVEI8MM | SVEBF16;
    line_case("Neoverse-N2", n2, n2_all, n2_all);
    const uint32_t n2_hidden = n2_all & ~(uint32_t)(SVEI8MM | SVEBF16);
    line_case("Neoverse-N2, ZFR0 hidden", n2_hidden_zfr0, n2_hidden, n2_hidden);
    line_case("near misses", near_misses, DOTPROD | I8MM, 0);
    line_case("sve2 without sve", sve2_without_sve, NEON | FP16 | SVE2, NEON | FP16);
#elif defined(__arm__)
    /* Both vocabularies: arm names from a 32-bit kernel, arm64 names from an arm64 kernel. */
    line_case("32-bit kernel line", arm32_kernel, NEON | FP16 | DOTPROD | BF16 | I8MM,
              NEON | FP16 | DOTPROD | BF16 | I8MM);
    line_case("Cortex-A55", a55, NEON | FP16 | DOTPROD, NEON | FP16 | DOTPROD);
    const uint32_t n2_arm = NEON | FP16 | DOTPROD | I8MM | BF16;
    line_case("Neoverse-N2", n2, n2_arm, n2_arm);
    line_case("Neoverse-N2, ZFR0 hidden", n2_hidden_zfr0, n2_arm, n2_arm);
    /* neonx is not neon, asimddp is not asimd, asimdhpx is not asimdhp, bf16x is not bf16. */
    line_case("near misses", near_misses, DOTPROD | I8MM, 0);
    line_case("sve2 without sve", sve2_without_sve, NEON | FP16, NEON | FP16);
    /* Each feature is judged alone: neon by its arm name, bf16 by its arm64 name. */
    line_case("mixed words", "neon fphp asimdhp bf16", NEON | FP16 | BF16, NEON | FP16 | BF16);
#else
    /* The host build (reference kernels only) has no Arm features: no line gives any. */
    const char *const lines[] = {arm32_kernel, a55, n2, n2_hidden_zfr0, near_misses, sve2_without_sve};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        line_case("host", lines[i], 0, 0);
    }
#endif
    line_case("empty line", "", 0, 0);
    line_case("label only", "Features\t:\n", 0, 0);
    printf("%d checks, %d failed\n", checks, failures);
    return failures > 125 ? 125 : failures;
}
