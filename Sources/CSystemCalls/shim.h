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

// "/proc/self/fd/<fd>" into `buffer` (at least 32 bytes), without library calls (for a vfork child).
static inline void kiosk_fd_path(char *buffer, int fd) {
    const char prefix[] = "/proc/self/fd/";
    int n = 0;
    for (; prefix[n]; n++) buffer[n] = prefix[n];
    char digits[12];
    int count = 0;
    do { digits[count++] = (char)('0' + fd % 10); fd /= 10; } while (fd > 0 && count < 11);
    while (count > 0) buffer[n++] = digits[--count];
    buffer[n] = 0;
}

// The most paths kiosk_spawn_isolated stages for one child.
#define KIOSK_MAX_STAGED 32
// Linux's values; glibc declares them only with _GNU_SOURCE.
#define KIOSK_O_PATH 010000000
#define KIOSK_CLONE_NEWNS 0x00020000

// Starts `path` as an isolated child without any helper program: vfork, then in the child (only system
// calls, as posix_spawn's own child does) a process group of its own, the network namespace `netns_fd`
// (when >= 0), the resource limits (processor seconds soft/hard, address space, file size, no core
// dumps), standard input from /dev/null, standard output and error into the given files, the working
// folder, every other descriptor closed, all signals at their defaults and unblocked, then execve.
//
// For a sandbox (IsolatedProcess with a Sandbox) two more steps come before execve. Staging, when
// `stage_root` is not NULL: the child takes a private mount namespace, opens the NULL-terminated
// `stage_sources`, mounts an empty tmpfs on `stage_root` and bind-mounts each source on the matching
// `stage_targets` entry there (a folder or an empty file made for it), so that a program started as
// another user reaches them without searching the folders above them. Then, when `gid` and
// `uid` are >= 0, the child drops to them for good (no supplementary groups; raw system calls, not
// glibc's, whose set*id calls signal every thread of the parent).
//
// Returns the child's pid, or -errno when it could not be started (the child's own errno when a step
// in it failed). Signals are blocked in the calling thread while the child shares its memory.
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
static inline pid_t kiosk_spawn_isolated(const char *path, char *const argv[], char *const envp[], const char *folder,
                                         const char *stdout_path, const char *stderr_path, int netns_fd,
                                         long cpu_seconds, long long memory_bytes, long long file_bytes,
                                         const char *stage_root, const char *const stage_sources[],
                                         const char *const stage_targets[], long uid, long gid) {
    volatile int child_error = 0;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = vfork();
    if (pid == 0) {
        struct rlimit cpu = { (rlim_t)cpu_seconds, (rlim_t)cpu_seconds + 1 };
        struct rlimit memory = { (rlim_t)memory_bytes, (rlim_t)memory_bytes };
        struct rlimit file = { (rlim_t)file_bytes, (rlim_t)file_bytes };
        struct rlimit core = { 0, 0 };
        int fd;
        if (setpgid(0, 0) != 0) goto fail;
        if (netns_fd >= 0 && syscall(SYS_setns, netns_fd, 0x40000000 /* CLONE_NEWNET */) != 0) goto fail;
        if (setrlimit(RLIMIT_CPU, &cpu) != 0 || setrlimit(RLIMIT_AS, &memory) != 0 ||
            setrlimit(RLIMIT_FSIZE, &file) != 0 || setrlimit(RLIMIT_CORE, &core) != 0) goto fail;
        if ((fd = open("/dev/null", O_RDONLY)) < 0 || dup2(fd, 0) < 0) goto fail;
        if ((fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 || dup2(fd, 1) < 0) goto fail;
        if ((fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 || dup2(fd, 2) < 0) goto fail;
        if (chdir(folder) != 0) goto fail;
        if (stage_root != NULL) {
            int sources[KIOSK_MAX_STAGED];
            int count = 0;
            char source_path[32];
            if (syscall(SYS_unshare, KIOSK_CLONE_NEWNS) != 0) goto fail;
            if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) goto fail;
            // Opened in the new namespace (a bind mount's source must be in the caller's), before the tmpfs
            // may cover them.
            for (; stage_sources[count] != NULL; count++) {
                if (count == KIOSK_MAX_STAGED) { errno = E2BIG; goto fail; }
                if ((sources[count] = open(stage_sources[count], KIOSK_O_PATH | O_CLOEXEC)) < 0) goto fail;
            }
            if (mount("tmpfs", stage_root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0) goto fail;
            for (int i = 0; i < count; i++) {
                struct stat info;
                if (fstat(sources[i], &info) != 0) goto fail;
                if (S_ISDIR(info.st_mode)) {
                    if (mkdir(stage_targets[i], 0700) != 0) goto fail;
                } else {
                    if ((fd = open(stage_targets[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) goto fail;
                    close(fd);
                }
                kiosk_fd_path(source_path, sources[i]);
                if (mount(source_path, stage_targets[i], NULL, MS_BIND, NULL) != 0) goto fail;
                close(sources[i]);
            }
        }
        if (gid >= 0) {
            if (syscall(SYS_setgroups, 0, NULL) != 0) goto fail;
            if (syscall(SYS_setresgid, (gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) goto fail;
        }
        if (uid >= 0 && syscall(SYS_setresuid, (uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) goto fail;
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 3U, ~0U, 0) != 0)
#endif
        {
            for (int other = 3; other < 65536; other++) close(other);
        }
        for (int signal = 1; signal < NSIG; signal++) {
            struct sigaction action = { 0 };
            action.sa_handler = SIG_DFL;
            sigaction(signal, &action, NULL);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
    fail:
        child_error = errno;
        _exit(127);
    }
    int spawn_error = pid < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) return -spawn_error;
    if (child_error != 0) {
        int status;
        waitpid(pid, &status, 0);
        return -child_error;
    }
    return pid;
}

// Counters in memory shared between processes (a file mapped MAP_SHARED; `CatalogueChanges`): atomic
// loads and read-modify-writes on a 64-bit word, which Swift's atomics cannot address in mapped memory.
#include <stdbool.h>
#include <stdint.h>
static inline uint64_t kiosk_shared_load(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}
static inline void kiosk_shared_increment(uint64_t *word) {
    __atomic_fetch_add(word, 1, __ATOMIC_SEQ_CST);
}
static inline bool kiosk_shared_compare_exchange(uint64_t *word, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

// Open file description locks (Linux 3.15+): owned by the open file, not the process, so two stores in
// one process do not share them, and released when the file is closed (a killed process included).
#include <fcntl.h>
#ifndef F_OFD_SETLK
#define F_OFD_SETLK 37   // Linux's values; glibc declares them only with _GNU_SOURCE
#define F_OFD_SETLKW 38
#endif
static inline int kiosk_ofd_lock(int fd, short type, off_t start, bool wait) {
    struct flock lock = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = 1, .l_pid = 0 };
    return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
}

// glibc's allocator tuning (`MemoryArenas`): the most arenas, as mallopt(M_ARENA_MAX, n). 1 on success.
#ifdef __GLIBC__
#include <malloc.h>
static inline int kiosk_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}
#endif

// Lowers the calling thread's scheduling priority to `nice` (Linux: a thread is a task with a nice value of
// its own). Only ever raised in number: an unprivileged process may not undo it. 0 on success.
static inline int kiosk_lower_thread_priority(int nice) {
    id_t thread = (id_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, thread);
    if (errno == 0 && current >= nice) return 0;   // already as low: never raised, even for root
    return setpriority(PRIO_PROCESS, thread, nice);
}
