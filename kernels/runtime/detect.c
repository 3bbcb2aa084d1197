/* CPU feature detection: AT_HWCAP/AT_HWCAP2 first, the /proc/cpuinfo Features line when those are empty (old
 * kernels, some emulators) or when ISAFORGE_DETECT=cpuinfo asks for it; on arm, when neither is there (32-bit
 * Android without getauxval), the cores' MIDR parts ("CPU implementer" / "CPU part") looked up in the catalogue's
 * part table, as TNN and MNN do; ISAFORGE_DETECT=midr forces that on any arch. Bits, tokens and parts come from the
 * catalogue. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "isf_internal.h"

/* Word separators of a Features line; ':' ends the "Features\t:" label. */
static const char separators[] = " \t\r\n:";

/* Whether `token` (len bytes) is a whole word of `line`: "asimd" is not in "asimddp", nor "neon" in "neonx". */
static int has_token(const char *line, const char *token, size_t len) {
    for (const char *p = line + strspn(line, separators); *p; p += strspn(p, separators)) {
        size_t word = strcspn(p, separators);
        if (word == len && memcmp(p, token, len) == 0) {
            return 1;
        }
        p += word;
    }
    return 0;
}

/* All space-separated `tokens` are words of `line`. An empty list is no vocabulary at all, so it never matches. */
static int has_all_tokens(const char *line, const char *tokens) {
    if (tokens == NULL || *tokens == '\0') {
        return 0;
    }
    for (const char *t = tokens; *t;) {
        size_t len = strcspn(t, " ");
        if (len > 0 && !has_token(line, t, len)) {
            return 0;
        }
        t += len + (t[len] == ' ');
    }
    return 1;
}

uint32_t isf_features_from_cpuinfo_line(const char *line) {
    uint32_t mask = 0;
    for (size_t i = 0; i < isf_feature_count; i++) {
        const isf_feature_info *f = &isf_features[i];
        if (has_all_tokens(line, f->cpuinfo_tokens) || has_all_tokens(line, f->cpuinfo_compat_tokens)) {
            mask |= f->bit;
        }
    }
    return mask;
}

/* A feature counts only with everything it implies: a kernel for it may use those too. */
static uint32_t drop_unsupported_implications(uint32_t mask) {
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < isf_feature_count; i++) {
            const isf_feature_info *f = &isf_features[i];
            if ((mask & f->bit) && (mask & f->implied) != f->implied) {
                mask &= ~f->bit;
                changed = 1;
            }
        }
    }
    return mask;
}

static uint32_t from_hwcap(uint64_t hw1, uint64_t hw2) {
    uint32_t mask = 0;
    for (size_t i = 0; i < isf_feature_count; i++) {
        const isf_feature_info *f = &isf_features[i];
        if ((hw1 & f->hwcap[0]) == f->hwcap[0] && (hw2 & f->hwcap[1]) == f->hwcap[1]) {
            mask |= f->bit;
        }
    }
    return mask;
}

/* The Features line's mask; *found says whether the line is there with at least one word (a line that names no
 * known feature is still an answer: its absence of "neon" means something, so the MIDR is not asked then). */
static uint32_t from_cpuinfo(int *found) {
    *found = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return 0;
    }
    char line[4096];
    uint32_t mask = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "Features", 8) != 0) {
            continue;
        }
        const char *words = line + 8 + strspn(line + 8, separators);
        *found = *words != '\0';
        mask = isf_features_from_cpuinfo_line(line + 8);
        break;
    }
    fclose(f);
    return mask;
}

/* --- The MIDR fallback --------------------------------------------------------------------------------------
 * A core is one "CPU part" line; its implementer is the "CPU implementer" line before it in the same block, a block
 * starting at a "processor" line (arm64 and recent arm kernels print both lines in every core's block; older 32-bit
 * kernels print them once, after all the "processor" lines: one core stands for all then). The result is the AND
 * of the listed cores' table features, so a big.LITTLE system gets what its LITTLE cores have: a thread may migrate
 * to any core. Any core that cannot be identified (part not in the table, implementer missing, a number that is
 * not one) makes the result 0: an unknown core may lack anything, and the MIDR has no other word on it. */
typedef struct {
    uint32_t mask;        /* AND of the identified cores' features */
    uint32_t l1d;         /* the least of the identified cores' L1D bytes (0: some core's is not fixed) */
    unsigned cores;       /* "CPU part" lines seen */
    int unknown;          /* some core could not be identified */
    long implementer;     /* of the current block: -1 none, -2 malformed */
    int implementer_only; /* an implementer line still waits for its part */
} midr_state;

/* `line` (len bytes, no newline) is "<label>", blanks, ':'; returns what follows the ':', or NULL. */
static const char *label_value(const char *line, size_t len, const char *label) {
    size_t n = strlen(label);
    if (len < n || memcmp(line, label, n) != 0) {
        return NULL;
    }
    size_t i = n;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) {
        i++;
    }
    return i < len && line[i] == ':' ? line + i + 1 : NULL;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
        return (c | 0x20) - 'a' + 10;
    }
    return -1;
}

/* Linux prints these fields as "0x%02x" / "0x%03x": 0x and hex digits, then nothing but blanks, and no MIDR field
 * read here is wider than 12 bits. -1 if not so: "0xd050" is 0xd050, no part of the table, and "0xd05x" is no
 * number. */
static long parse_hex_field(const char *value, const char *end) {
    while (value < end && (*value == ' ' || *value == '\t')) {
        value++;
    }
    if (end - value < 3 || value[0] != '0' || (value[1] != 'x' && value[1] != 'X')) {
        return -1;
    }
    value += 2;
    uint32_t v = 0;
    int digits = 0;
    for (int d; value < end && (d = hex_digit(*value)) >= 0; value++) {
        v = v * 16 + (uint32_t)d;
        if (++digits > 3 && v > 0xfffu) { /* stops before v can overflow, leading zeros allowed */
            return -1;
        }
    }
    while (value < end && (*value == ' ' || *value == '\t' || *value == '\r')) {
        value++;
    }
    return digits > 0 && value == end ? (long)v : -1;
}

static void midr_line(midr_state *s, const char *line, size_t len) {
    const char *end = line + len, *value;
    if (label_value(line, len, "processor") != NULL) {
        s->unknown |= s->implementer_only;
        s->implementer = -1;
        s->implementer_only = 0;
    } else if ((value = label_value(line, len, "CPU implementer")) != NULL) {
        s->unknown |= s->implementer_only; /* the previous implementer never got its part */
        long v = parse_hex_field(value, end);
        s->implementer = v >= 0 ? v : -2;
        s->implementer_only = 1;
    } else if ((value = label_value(line, len, "CPU part")) != NULL) {
        s->cores++;
        s->implementer_only = 0;
        long part = parse_hex_field(value, end);
        size_t i = 0;
        while (i < isf_cpu_part_count &&
               !(s->implementer >= 0 && part >= 0 && isf_cpu_parts[i].implementer == (uint32_t)s->implementer &&
                 isf_cpu_parts[i].part == (uint32_t)part)) {
            i++;
        }
        if (i < isf_cpu_part_count) {
            s->mask &= isf_cpu_parts[i].features;
            s->l1d = isf_cpu_parts[i].l1d_bytes < s->l1d ? isf_cpu_parts[i].l1d_bytes : s->l1d;
        } else {
            s->unknown = 1;
        }
    }
}

static int midr_complete(const midr_state *s) { return s->cores > 0 && !s->unknown && !s->implementer_only; }
static uint32_t midr_result(const midr_state *s) { return midr_complete(s) ? s->mask : 0; }
static uint32_t midr_l1d(const midr_state *s) { return midr_complete(s) ? s->l1d : 0; }

static const midr_state midr_start = {UINT32_MAX, UINT32_MAX, 0, 0, -1, 0};

static midr_state midr_of_text(const char *text) {
    midr_state s = midr_start;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        midr_line(&s, p, len);
        p += len + (p[len] == '\n');
    }
    return s;
}

uint32_t isf_features_from_midr_text(const char *text) {
    midr_state s = midr_of_text(text);
    return midr_result(&s);
}

uint32_t isf_l1d_from_midr_text(const char *text) {
    midr_state s = midr_of_text(text);
    return midr_l1d(&s);
}

/* The system's /proc/cpuinfo through midr_line; midr_start (no core) when it cannot be read. */
static midr_state midr_of_cpuinfo(void) {
    midr_state s = midr_start;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return s;
    }
    /* getline: lines of any length (a Features line may be long), so no line is read as two. */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        midr_line(&s, line, (size_t)len - (line[len - 1] == '\n'));
    }
    free(line);
    fclose(f);
    return s;
}

static uint32_t from_midr(void) {
    midr_state s = midr_of_cpuinfo();
    return midr_result(&s);
}

static int mode_is(const char *mode, const char *name) { return mode != NULL && strcmp(mode, name) == 0; }

const char *isf_detect_order(const char *mode, uint64_t hwcap1, int features_line) {
    if (mode_is(mode, "midr") || mode_is(mode, "cpuinfo")) {
        return mode_is(mode, "midr") ? "midr" : "cpuinfo";
    }
    if (hwcap1 != 0) {
        return "hwcap";
    }
#if defined(__arm__)
    /* Only on arm: an arm64 kernel always gives AT_HWCAP and a Features line, while a 32-bit libc may lack
     * getauxval (Android before API 18) and a 32-bit kernel the Features line. */
    if (!features_line) {
        return "midr";
    }
#endif
    (void)features_line;
    return "cpuinfo";
}

uint32_t isf_detect_features(const char **source) {
    if (isf_feature_count == 0) {
        *source = "none";
        return 0;
    }
    const char *mode = getenv("ISAFORGE_DETECT");
    uint64_t hw1 = 0, hw2 = 0;
#if defined(__linux__) && defined(AT_HWCAP2)
    hw1 = getauxval(AT_HWCAP);
    hw2 = getauxval(AT_HWCAP2);
#endif
    /* The Features line is read only where it may be the answer or decide whether the MIDR is asked. */
    int features_line = 0;
    uint32_t line_mask = 0;
    if (!mode_is(mode, "midr") && (hw1 == 0 || mode_is(mode, "cpuinfo"))) {
        line_mask = from_cpuinfo(&features_line);
    }
    *source = isf_detect_order(mode, hw1, features_line);
    if (strcmp(*source, "midr") == 0) {
        return drop_unsupported_implications(from_midr());
    }
    if (strcmp(*source, "cpuinfo") == 0) {
        return drop_unsupported_implications(line_mask);
    }
    return drop_unsupported_implications(from_hwcap(hw1, hw2));
}

uint32_t isf_close_features(uint32_t mask) { return drop_unsupported_implications(mask); }

static void report_unknown(const char *var, const char *name, size_t len) {
    fprintf(stderr, "isaforge: %s: unknown feature '%.*s' ignored (known:", var, (int)len, name);
    for (size_t i = 0; i < isf_feature_count; i++) {
        fprintf(stderr, " %s", isf_features[i].name);
    }
    fprintf(stderr, ")\n");
}

uint32_t isf_parse_feature_list(const char *list, const char *var) {
    uint32_t mask = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ", ");
        size_t i = 0;
        while (i < isf_feature_count &&
               !(strlen(isf_features[i].name) == len && strncmp(isf_features[i].name, p, len) == 0)) {
            i++;
        }
        if (i < isf_feature_count) {
            mask |= isf_features[i].bit;
        } else if (len > 0 && var != NULL) {
            report_unknown(var, p, len);
        }
        p += len;
        p += strspn(p, ", ");
    }
    return mask;
}

/* --- The running core ----------------------------------------------------------------------------------------
 * For kernels tuned for one core (an engine's core-tuned twins): the MIDR of the core running the caller, from
 * MIDR_EL1 on arm64 (Linux emulates the read when it sets HWCAP_CPUID, as QEMU user mode does), else from the
 * /proc/cpuinfo block of the CPU the caller runs on (sched_getcpu), else its first block. ISAFORGE_CORE=<part name>
 * (the catalogue's [cpu_part.*] names: cortex-a55, …) says it instead: a test, or an engine that pins its threads to
 * one kind of core on big.LITTLE. */
#if defined(__aarch64__) && defined(__linux__)
#define ISF_HWCAP_CPUID (1UL << 11)
#endif

static uint32_t core_of(long implementer, long part) {
    return implementer >= 0 && part >= 0 ? ISF_CORE((uint32_t)implementer, (uint32_t)part) : 0;
}

/* The table's part of that name; NULL, said on stderr, when there is none. */
static const isf_cpu_part_info *part_named(const char *name) {
    for (size_t i = 0; i < isf_cpu_part_count; i++) {
        if (strcmp(isf_cpu_parts[i].name, name) == 0) {
            return &isf_cpu_parts[i];
        }
    }
    fprintf(stderr, "isaforge: ISAFORGE_CORE: unknown core '%s' ignored; known:", name);
    for (size_t i = 0; i < isf_cpu_part_count; i++) {
        fprintf(stderr, " %s", isf_cpu_parts[i].name);
    }
    fputc('\n', stderr);
    return NULL;
}

static uint32_t core_named(const char *name) {
    const isf_cpu_part_info *p = part_named(name);
    return p != NULL ? ISF_CORE(p->implementer, p->part) : 0;
}

/* The "CPU implementer" and "CPU part" of the block of processor `cpu` (or of the first block when cpu < 0 or no
 * block has that number). */
static uint32_t core_from_cpuinfo(int cpu) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return 0;
    }
    long block = -1, implementer = -1, part = -1;
    uint32_t first = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)got - (line[got - 1] == '\n');
        const char *value;
        if ((value = label_value(line, len, "processor")) != NULL) {
            block = strtol(value, NULL, 10);
        } else if ((value = label_value(line, len, "CPU implementer")) != NULL) {
            implementer = parse_hex_field(value, line + len);
        } else if ((value = label_value(line, len, "CPU part")) != NULL) {
            part = parse_hex_field(value, line + len);
            uint32_t core = core_of(implementer, part);
            first = first ? first : core;
            if (block == cpu && cpu >= 0) {
                free(line);
                fclose(f);
                return core;
            }
        }
    }
    free(line);
    fclose(f);
    return first;
}

uint32_t isf_running_core(void) {
    const char *named = getenv("ISAFORGE_CORE");
    if (named != NULL && *named != '\0') {
        return core_named(named);
    }
#if defined(__aarch64__) && defined(__linux__)
    if (getauxval(AT_HWCAP) & ISF_HWCAP_CPUID) {
        uint64_t midr;
        __asm__ volatile("mrs %0, MIDR_EL1" : "=r"(midr));
        return core_of((long)((midr >> 24) & 0xff), (long)((midr >> 4) & 0xfff));
    }
#endif
#if defined(__linux__)
    return core_from_cpuinfo(sched_getcpu());
#else
    return 0;
#endif
}

/* --- The L1 data cache ---------------------------------------------------------------------------------------
 * What the driver's Kc is planned for (isf_l1d_bytes, read once with the features): the least L1D among the
 * system's cores (a thread may run on any of them: big.LITTLE), each core's from the catalogue's part table by its
 * /proc/cpuinfo MIDR, or the core ISAFORGE_CORE names; ISF_L1D_ASSUMED when some core is not in the table or its
 * L1D is the implementer's choice. */

uint32_t isf_detect_l1d_bytes(void) {
    const char *named = getenv("ISAFORGE_CORE");
    uint32_t bytes = 0;
    if (named != NULL && *named != '\0') {
        const isf_cpu_part_info *p = part_named(named);
        bytes = p != NULL ? p->l1d_bytes : 0;
    } else {
        midr_state s = midr_of_cpuinfo();
        bytes = midr_l1d(&s);
    }
    return bytes ? bytes : ISF_L1D_ASSUMED;
}
