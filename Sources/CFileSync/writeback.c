#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include "CFileSync.h"

int h5replay_start_writeback(int fd) {
#ifdef __linux__
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}
