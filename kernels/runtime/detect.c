/* CPU feature detection: AT_HWCAP/AT_HWCAP2 first, the /proc/cpuinfo Features line when those are empty (old
 * kernels, some emulators) or when ISAFORGE_DETECT=cpuinfo asks for it. Bits and tokens come from the catalogue. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static uint32_t from_cpuinfo(void) {
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
        mask = isf_features_from_cpuinfo_line(line + 8);
        break;
    }
    fclose(f);
    return mask;
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
    if ((mode != NULL && strcmp(mode, "cpuinfo") == 0) || hw1 == 0) {
        *source = "cpuinfo";
        return drop_unsupported_implications(from_cpuinfo());
    }
    *source = "hwcap";
    return drop_unsupported_implications(from_hwcap(hw1, hw2));
}

uint32_t isf_close_features(uint32_t mask) { return drop_unsupported_implications(mask); }

uint32_t isf_parse_feature_list(const char *list, void (*report_unknown)(const char *name, size_t len)) {
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
        } else if (len > 0 && report_unknown != NULL) {
            report_unknown(p, len);
        }
        p += len;
        p += strspn(p, ", ");
    }
    return mask;
}
