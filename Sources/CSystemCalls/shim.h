// System calls Swift's Glibc module does not expose.
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
