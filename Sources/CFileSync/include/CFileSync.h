// Starting the kernel's writeback of a file's dirty pages (Linux sync_file_range), which
// glibc declares only under _GNU_SOURCE and Swift's Glibc module does not import.
#ifndef H5REPLAY_CFILESYNC_H
#define H5REPLAY_CFILESYNC_H

/// Starts writing back every dirty page of the open file `fd` without waiting for the
/// writes to finish; the descriptor may be read-only. 0 on success, -1 with errno set;
/// -1 with errno ENOSYS where the system has no such call.
int h5replay_start_writeback(int fd);

#endif
