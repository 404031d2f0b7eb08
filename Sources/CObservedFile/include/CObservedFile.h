// A read-only stdio stream over a file descriptor that hands every block it reads to an
// observer, in file order, before the reader sees it: libpcap reads a capture through it,
// and the observer counts how far it has read.
// glibc's fopencookie (BSD's funopen) makes such a stream; Swift's Glibc module imports
// neither.
#ifndef H5REPLAY_COBSERVEDFILE_H
#define H5REPLAY_COBSERVEDFILE_H

#include <stddef.h>
#include <stdio.h>

/// Called with each block read, in file order.
typedef void (*h5replay_observer)(void *context, const void *bytes, size_t count);

/// A stream reading `fd`, which it closes when the stream is closed; `observe(context, ...)`
/// sees each block as it is read. One thread at a time may use it: on glibc it takes no
/// lock of its own (`FSETLOCKING_BYCALLER`). NULL with errno set when no stream could be made; `fd`
/// is then still the caller's to close.
FILE *h5replay_fdopen_observed(int fd, void *context, h5replay_observer observe);

#endif
