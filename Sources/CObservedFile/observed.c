#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#if defined(__GLIBC__)
#include <stdio_ext.h>
#endif
#include <stdlib.h>
#include <unistd.h>
#include "CObservedFile.h"

struct observed {
    int fd;
    void *context;
    h5replay_observer observe;
};

static long observed_read_count(void *cookie, char *buffer, size_t size) {
    struct observed *o = cookie;
    ssize_t n;
    do {
        n = read(o->fd, buffer, size);
    } while (n < 0 && errno == EINTR);
    if (n > 0) o->observe(o->context, buffer, (size_t)n);
    return (long)n;
}

static int observed_close(void *cookie) {
    struct observed *o = cookie;
    int status = close(o->fd);
    free(o);
    return status;
}

#if defined(__GLIBC__)
static ssize_t observed_read(void *cookie, char *buffer, size_t size) {
    return (ssize_t)observed_read_count(cookie, buffer, size);
}
#else
static int observed_read(void *cookie, char *buffer, int size) {
    return (int)observed_read_count(cookie, buffer, (size_t)size);
}
#endif

FILE *h5replay_fdopen_observed(int fd, void *context, h5replay_observer observe) {
    struct observed *o = malloc(sizeof *o);
    if (!o) return NULL;
    o->fd = fd;
    o->context = context;
    o->observe = observe;
#if defined(__GLIBC__)
    cookie_io_functions_t io = {.read = observed_read, .write = NULL, .seek = NULL, .close = observed_close};
    FILE *stream = fopencookie(o, "r", io);
    // One thread reads the stream (libpcap's two freads a packet): stdio's lock on each
    // call is left out.
    if (stream) __fsetlocking(stream, FSETLOCKING_BYCALLER);
#else
    FILE *stream = funopen(o, observed_read, NULL, NULL, observed_close);
#endif
    if (!stream) free(o);
    return stream;
}
