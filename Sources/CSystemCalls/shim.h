// System calls Swift's Glibc module does not expose.
#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

// preadv2(fd, {buffer, count}, 1, offset, RWF_NOWAIT): reads only what is already in the page cache,
// never waiting for the disk (Linux 4.14+). -1 with errno EAGAIN when the data is not cached, and
// ENOSYS/EOPNOTSUPP where unsupported; the caller then reads the usual way.
static inline ssize_t kiosk_pread_nowait(int fd, void *buffer, size_t count, off_t offset) {
    struct iovec vector = { buffer, count };
    return syscall(SYS_preadv2, fd, &vector, 1, (long)offset, 0L, 0x00000008 /* RWF_NOWAIT */);
}

// Spawning child processes (IsolatedProcess): glibc's extensions to posix_spawn, declared here because
// Swift's Glibc module is not built with _GNU_SOURCE, and pidfd_open (Linux 5.3+) to wait for a child
// with a timeout without polling.
#include <spawn.h>
#include <poll.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *__restrict, const char *__restrict);

// Closes every descriptor from `from` up in the child (glibc 2.34+).
static inline int kiosk_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

// Makes the child start in `path` (glibc 2.29+).
static inline int kiosk_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

// A descriptor that becomes readable when process `pid` ends; -1 with errno ENOSYS on old kernels.
static inline int kiosk_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
