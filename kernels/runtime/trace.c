/* ISAFORGE_TRACE: which kernels ran and which dispatch refused, for `isaforge test-qemu`'s coverage matrix. Lines
 * from concurrent processes (a test suite run in parallel) must not interleave: one write() of a short line to a
 * file opened O_APPEND does not. */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "isf_internal.h"

void isf_trace_kernel(const char *event, const char *owner, const char *kernel) {
    const char *path = getenv("ISAFORGE_TRACE");
    if (path == NULL || *path == '\0' || event == NULL || owner == NULL || kernel == NULL) {
        return;
    }
    char line[256];
    int len = snprintf(line, sizeof line, "%s %s %s\n", event, owner, kernel);
    if (len <= 0 || (size_t)len >= sizeof line) {
        return;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return;
    }
    /* Best effort: a trace that cannot be written shows up as a kernel that never ran. */
    ssize_t written = write(fd, line, (size_t)len);
    (void)written;
    close(fd);
}
