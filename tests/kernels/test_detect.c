/* The /proc/cpuinfo fallbacks: the Features line parser fed real-looking Features lines, and the MIDR fallback fed
 * whole synthetic /proc/cpuinfo texts (its expectations follow the catalogue's [cpu_part.*] table). A 32-bit process on an arm64 kernel reads the arm64
 * kernel's names ("asimd", "bf16") unless its personality is PER_LINUX32, so on arm both vocabularies must work;
 * on aarch64 only the arm64 one exists. Tokens are whole words: "asimddp" is not "asimd", "neonx" is not "neon".
 * The same source is built for both arches; the expected masks differ by #if __aarch64__.
 * Exit status is the number of failed checks (meson test and pytest read it). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* --- MIDR fallback: whole /proc/cpuinfo texts ------------------------------------------------------------- */

/* One block per core as an arm64 kernel (and a recent arm one) prints it. */
#define CORE(n, impl, part)                                                                          \
    "processor\t: " #n "\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: " impl \
    "\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: " part "\nCPU revision\t: 0\n\n"

static const char midr_a55[] = CORE(0, "0x41", "0xd05");
/* Four Cortex-A55 and two Cortex-A76 (DynamIQ big.LITTLE). */
static const char midr_a55_a76[] = CORE(0, "0x41", "0xd05") CORE(1, "0x41", "0xd05") CORE(2, "0x41", "0xd05")
    CORE(3, "0x41", "0xd05") CORE(4, "0x41", "0xd0b") CORE(5, "0x41", "0xd0b");
/* Armv9 big cores with an Armv8.2 LITTLE one: only the LITTLE core's features are common. */
static const char midr_a55_a710[] = CORE(0, "0x41", "0xd05") CORE(1, "0x41", "0xd47") CORE(2, "0x41", "0xd48");
static const char midr_a53_a76[] = CORE(0, "0x41", "0xd03") CORE(1, "0x41", "0xd0b");
static const char midr_n2[] = CORE(0, "0x41", "0xd49") CORE(1, "0x41", "0xd49");
static const char midr_a64fx[] = CORE(0, "0x46", "0x001");
/* A Qualcomm Kryo part (implementer 0x51) next to a Cortex-A55: one unknown core and nothing can be relied on. */
static const char midr_unknown_core[] = CORE(0, "0x41", "0xd05") CORE(1, "0x51", "0x801");
/* QEMU's aarch64 `max`: its own implementer 0x00 and part 0x051, in no table. */
static const char midr_qemu_max[] = CORE(0, "0x00", "0x051");
/* The part number of an A55 under another implementer is not an A55. */
static const char midr_wrong_implementer[] = CORE(0, "0x46", "0xd05");
/* Near misses: a longer number, trailing junk, no 0x, a label that only starts like "CPU part". */
static const char midr_longer_part[] = CORE(0, "0x41", "0xd050");
static const char midr_junk_part[] = CORE(0, "0x41", "0xd05x");
static const char midr_decimal_part[] = CORE(0, "0x41", "3333");
static const char midr_huge_part[] = CORE(0, "0x41", "0x100000d05");
/* Leading zeros are the same number. */
static const char midr_padded[] = CORE(0, "0x0041", "0x00d05");
static const char midr_partition[] = "processor\t: 0\nCPU implementer\t: 0x41\nCPU partition\t: 0xd05\n";
/* Missing lines: a part without its implementer, an implementer without its part, neither. */
static const char midr_no_implementer[] = "processor\t: 0\nCPU part\t: 0xd05\n";
static const char midr_no_part[] = CORE(0, "0x41", "0xd05") "processor\t: 1\nCPU implementer\t: 0x41\n";
static const char midr_none[] = "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd asimddp\n";
/* An older 32-bit kernel: the MIDR lines once, after every processor line; CRLF, upper-case hex, no last newline. */
static const char midr_old_arm_kernel[] = "Processor\t: ARMv7 Processor rev 3 (v7l)\r\nprocessor\t: 0\r\n"
                                          "BogoMIPS\t: 38.40\r\nprocessor\t: 1\r\nBogoMIPS\t: 38.40\r\n\r\n"
                                          "Features\t: swp half thumb fastmult vfp edsp neon vfpv3 tls vfpv4\r\n"
                                          "CPU implementer\t: 0x41\r\nCPU architecture: 7\r\nCPU variant\t: 0x0\r\n"
                                          "CPU part\t: 0xC07\r\nCPU revision\t: 3\r\n\r\nHardware\t: sun8i";

static void midr_case(const char *what, const char *text, uint32_t raw, uint32_t closed) {
    uint32_t got = isf_features_from_midr_text(text);
    expect(what, got, raw);
    char closed_what[96];
    snprintf(closed_what, sizeof closed_what, "%s (closed)", what);
    expect(closed_what, isf_close_features(got), closed);
}

/* Texts whose answer is 0 on every arch: nothing identifies every core. */
static void midr_nothing_cases(void) {
    midr_case("MIDR: unknown core", midr_unknown_core, 0, 0);
    midr_case("MIDR: QEMU max (aarch64)", midr_qemu_max, 0, 0);
    midr_case("MIDR: wrong implementer", midr_wrong_implementer, 0, 0);
    midr_case("MIDR: 0xd050", midr_longer_part, 0, 0);
    midr_case("MIDR: 0xd05x", midr_junk_part, 0, 0);
    midr_case("MIDR: no 0x", midr_decimal_part, 0, 0);
    midr_case("MIDR: 0x100000d05", midr_huge_part, 0, 0);
    midr_case("MIDR: CPU partition", midr_partition, 0, 0);
    midr_case("MIDR: part without implementer", midr_no_implementer, 0, 0);
    midr_case("MIDR: implementer without part", midr_no_part, 0, 0);
    midr_case("MIDR: no MIDR lines", midr_none, 0, 0);
    midr_case("MIDR: empty text", "", 0, 0);
}

/* The least L1D of the listed cores, from the part table's fixed sizes (N2, A64FX: 64 KiB; A57: 32 KiB); 0 when one
 * core's size is the implementer's choice (A55, A76's LITTLE partner) or the core is unknown. */
static const char midr_a57_n1[] = CORE(0, "0x41", "0xd07") CORE(1, "0x41", "0xd0c");

static void l1d_case(const char *what, const char *text, uint32_t want) {
    char l1d_what[96];
    snprintf(l1d_what, sizeof l1d_what, "%s (L1D bytes)", what);
    expect(l1d_what, isf_l1d_from_midr_text(text), want);
}

static void l1d_cases(void) {
    l1d_case("MIDR: Neoverse-N2", midr_n2, 64 * 1024);
    l1d_case("MIDR: A64FX", midr_a64fx, 64 * 1024);
    l1d_case("MIDR: A57 + N1", midr_a57_n1, 32 * 1024);
    l1d_case("MIDR: Cortex-A55", midr_a55, 0);
    l1d_case("MIDR: A55 + A76", midr_a55_a76, 0);
    l1d_case("MIDR: unknown core", midr_unknown_core, 0);
    l1d_case("MIDR: implementer without part", midr_no_part, 0);
    l1d_case("MIDR: empty text", "", 0);
}

static void expect_source(const char *what, const char *got, const char *want) {
    checks++;
    if (strcmp(got, want) != 0) {
        failures++;
        fprintf(stderr, "FAIL %s: got %s, want %s\n", what, got, want);
    }
}

/* The order of the sources: ISAFORGE_DETECT, then AT_HWCAP, then the Features line, then (arm only) the MIDR. */
static void order_cases(void) {
#if defined(__arm__)
    const char *const neither = "midr";
#else
    const char *const neither = "cpuinfo"; /* aarch64 (and the host) never guess from the MIDR by themselves */
#endif
    expect_source("order: hwcap", isf_detect_order(NULL, 1u << 12, 1), "hwcap");
    expect_source("order: hwcap, no Features line", isf_detect_order(NULL, 1u << 12, 0), "hwcap");
    expect_source("order: no hwcap", isf_detect_order(NULL, 0, 1), "cpuinfo");
    expect_source("order: neither", isf_detect_order(NULL, 0, 0), neither);
    expect_source("order: unknown mode", isf_detect_order("hwcap", 0, 0), neither);
    expect_source("order: forced midr", isf_detect_order("midr", 1u << 12, 1), "midr");
    expect_source("order: forced cpuinfo", isf_detect_order("cpuinfo", 1u << 12, 1), "cpuinfo");
    expect_source("order: forced cpuinfo, no line", isf_detect_order("cpuinfo", 0, 0), "cpuinfo");
}

int main(void) {
    order_cases();
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

    const uint32_t v82 = NEON | FP16 | DOTPROD;
    midr_case("MIDR: Cortex-A55", midr_a55, v82, v82);
    midr_case("MIDR: A55 + A76", midr_a55_a76, v82, v82);
    midr_case("MIDR: A55 + A710 + X2", midr_a55_a710, v82, v82);
    midr_case("MIDR: A53 + A76", midr_a53_a76, NEON, NEON);
    midr_case("MIDR: Neoverse-N2", midr_n2, n2_all, n2_all);
    midr_case("MIDR: A64FX", midr_a64fx, NEON | FP16 | SVE, NEON | FP16 | SVE);
    midr_case("MIDR: old arm kernel, Cortex-A7", midr_old_arm_kernel, NEON, NEON);
    midr_case("MIDR: leading zeros", midr_padded, v82, v82);
    midr_nothing_cases();
    l1d_cases();
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

    /* The same parts; on arm only the features that exist there (no SVE). */
    const uint32_t v82 = NEON | FP16 | DOTPROD;
    midr_case("MIDR: Cortex-A55", midr_a55, v82, v82);
    midr_case("MIDR: A55 + A76", midr_a55_a76, v82, v82);
    midr_case("MIDR: A55 + A710 + X2", midr_a55_a710, v82, v82);
    midr_case("MIDR: A53 + A76", midr_a53_a76, NEON, NEON);
    midr_case("MIDR: Neoverse-N2", midr_n2, n2_arm, n2_arm);
    midr_case("MIDR: A64FX", midr_a64fx, NEON | FP16, NEON | FP16);
    midr_case("MIDR: old arm kernel, Cortex-A7", midr_old_arm_kernel, NEON, NEON);
    midr_case("MIDR: leading zeros", midr_padded, v82, v82);
    midr_nothing_cases();
    l1d_cases();
#else
    /* The host build (reference kernels only) has no Arm features: no line gives any. */
    const char *const lines[] = {arm32_kernel, a55, n2, n2_hidden_zfr0, near_misses, sve2_without_sve};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        line_case("host", lines[i], 0, 0);
    }
    /* Nor any MIDR: the host build's part table is empty. */
    const char *const texts[] = {midr_a55,   midr_a55_a76,        midr_a55_a710, midr_a53_a76,
                                 midr_a64fx, midr_old_arm_kernel, midr_n2,       midr_padded};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        midr_case("host MIDR", texts[i], 0, 0);
    }
    midr_nothing_cases();
#endif
    line_case("empty line", "", 0, 0);
    line_case("label only", "Features\t:\n", 0, 0);
    printf("%d checks, %d failed\n", checks, failures);
    return failures > 125 ? 125 : failures;
}
