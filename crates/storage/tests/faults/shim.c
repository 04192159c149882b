/*
 * A fault injector for the embedded store's files, loaded with LD_PRELOAD into a process that
 * runs the store on a real file system. It counts the operations that change files under one
 * directory (writes, syncs, truncations, renames) and, at the chosen one, either fails it with
 * an errno (the process goes on) or kills the process, after writing a random part of the
 * buffer when the operation is a write (a torn write, as a crash leaves it).
 *
 * Settings (environment):
 *   CAPSTAN_FAULT_DIR   absolute path: only files opened under it are counted
 *   CAPSTAN_FAULT_AT    the 1-based operation to fault (0 or unset: none)
 *   CAPSTAN_FAULT_KIND  crash | eio | enospc
 *   CAPSTAN_FAULT_SEED  chooses how much of a torn write reaches the file
 *   CAPSTAN_FAULT_CRASH_AT  a later operation at which the process is killed as well (a
 *                       failed write followed by a crash before anything repaired it)
 * At exit the number of counted operations is printed on stderr ("capstan-fault-ops N") so
 * that a dry run tells the range to choose from.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 65536

static atomic_char tracked[MAX_FDS];
static atomic_long counted;
static const char *dir;
static size_t dir_len;
static long fault_at;
static long crash_at;
static int fault_errno; /* 0: crash */
static unsigned long seed;

__attribute__((constructor)) static void setup(void) {
    dir = getenv("CAPSTAN_FAULT_DIR");
    dir_len = dir ? strlen(dir) : 0;
    const char *at = getenv("CAPSTAN_FAULT_AT");
    fault_at = at ? atol(at) : 0;
    const char *then = getenv("CAPSTAN_FAULT_CRASH_AT");
    crash_at = then ? atol(then) : 0;
    const char *kind = getenv("CAPSTAN_FAULT_KIND");
    if (kind && strcmp(kind, "eio") == 0)
        fault_errno = EIO;
    else if (kind && strcmp(kind, "enospc") == 0)
        fault_errno = ENOSPC;
    const char *s = getenv("CAPSTAN_FAULT_SEED");
    seed = s ? strtoul(s, NULL, 10) : 1;
}

__attribute__((destructor)) static void report(void) {
    char line[64];
    int n = snprintf(line, sizeof line, "capstan-fault-ops %ld\n", atomic_load(&counted));
    if (n > 0)
        (void)!write(2, line, (size_t)n);
}

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        abort();
    return f;
}

static int under_dir(const char *path) {
    return dir_len && path && strncmp(path, dir, dir_len) == 0 &&
           (path[dir_len] == '/' || path[dir_len] == '\0');
}

static int is_tracked(int fd) { return fd >= 0 && fd < MAX_FDS && atomic_load(&tracked[fd]); }

static void track(int fd, const char *path) {
    if (fd >= 0 && fd < MAX_FDS)
        atomic_store(&tracked[fd], (char)under_dir(path));
}

/* What to do with this counted operation. */
enum action { GO, FAIL, CRASH };

static enum action next_action(void) {
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (crash_at != 0 && n == crash_at)
        return CRASH;
    if (fault_at == 0 || n != fault_at)
        return GO;
    return fault_errno ? FAIL : CRASH;
}

__attribute__((noreturn)) static void crash(void) {
    kill(getpid(), SIGKILL);
    for (;;)
        pause();
}

/* How much of a write of `len` bytes reaches the file before the crash. */
static size_t torn(size_t len) { return len ? (size_t)(seed % (len + 1)) : 0; }

static int open_common(const char *name, const char *path, int flags, mode_t mode) {
    int (*f)(const char *, int, ...) = real(name);
    int fd = f(path, flags, mode);
    track(fd, path);
    return fd;
}

/* The mode argument of an open that creates (read only then, as the variadic call gives it). */
#define MODE_ARG(flags)                                                                       \
    mode_t mode = 0;                                                                          \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                                    \
        va_list ap;                                                                           \
        va_start(ap, flags);                                                                  \
        mode = va_arg(ap, mode_t);                                                            \
        va_end(ap);                                                                           \
    }

#define OPEN_WRAPPER(name)                                                                    \
    int name(const char *path, int flags, ...) {                                              \
        MODE_ARG(flags);                                                                      \
        return open_common(#name, path, flags, mode);                                         \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                                  \
    int name(int dirfd, const char *path, int flags, ...) {                                   \
        MODE_ARG(flags);                                                                      \
        int (*f)(int, const char *, int, ...) = real(#name);                                  \
        int fd = f(dirfd, path, flags, mode);                                                 \
        track(fd, path[0] == '/' ? path : NULL);                                              \
        return fd;                                                                            \
    }
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

int close(int fd) {
    int (*f)(int) = real("close");
    if (fd >= 0 && fd < MAX_FDS)
        atomic_store(&tracked[fd], 0);
    return f(fd);
}

ssize_t write(int fd, const void *buf, size_t len) {
    ssize_t (*f)(int, const void *, size_t) = real("write");
    if (is_tracked(fd)) {
        switch (next_action()) {
        case FAIL:
            errno = fault_errno;
            return -1;
        case CRASH:
            f(fd, buf, torn(len));
            crash();
        case GO:
            break;
        }
    }
    return f(fd, buf, len);
}

#define PWRITE_WRAPPER(name, off_type)                                                        \
    ssize_t name(int fd, const void *buf, size_t len, off_type offset) {                      \
        ssize_t (*f)(int, const void *, size_t, off_type) = real(#name);                      \
        if (is_tracked(fd)) {                                                                 \
            switch (next_action()) {                                                          \
            case FAIL:                                                                        \
                errno = fault_errno;                                                          \
                return -1;                                                                    \
            case CRASH:                                                                       \
                f(fd, buf, torn(len), offset);                                                \
                crash();                                                                      \
            case GO:                                                                          \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        return f(fd, buf, len, offset);                                                       \
    }
PWRITE_WRAPPER(pwrite, off_t)
PWRITE_WRAPPER(pwrite64, off64_t)

ssize_t writev(int fd, const struct iovec *iov, int count) {
    ssize_t (*f)(int, const struct iovec *, int) = real("writev");
    if (is_tracked(fd)) {
        switch (next_action()) {
        case FAIL:
            errno = fault_errno;
            return -1;
        case CRASH:
            if (count > 0) {
                ssize_t (*w)(int, const void *, size_t) = real("write");
                w(fd, iov[0].iov_base, torn(iov[0].iov_len));
            }
            crash();
        case GO:
            break;
        }
    }
    return f(fd, iov, count);
}

/* Syncs and truncations: a crash happens before or after the call (the seed says which). */
#define FD_WRAPPER(name, ...)                                                                 \
    int name(int fd __VA_OPT__(, ) __VA_ARGS__) {                                             \
        int (*f)(int __VA_OPT__(, ) __VA_ARGS__) = real(#name);                               \
        if (is_tracked(fd)) {                                                                 \
            switch (next_action()) {                                                          \
            case FAIL:                                                                        \
                errno = fault_errno;                                                          \
                return -1;                                                                    \
            case CRASH:                                                                       \
                if (seed & 1)                                                                 \
                    FD_CALL_##name;                                                           \
                crash();                                                                      \
            case GO:                                                                          \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        return FD_CALL_##name;                                                                \
    }
#define FD_CALL_fsync f(fd)
#define FD_CALL_fdatasync f(fd)
#define FD_CALL_ftruncate f(fd, len)
#define FD_CALL_ftruncate64 f(fd, len)
#define FD_CALL_fallocate f(fd, mode, offset, len)
#define FD_CALL_fallocate64 f(fd, mode, offset, len)
FD_WRAPPER(fsync)
FD_WRAPPER(fdatasync)
FD_WRAPPER(ftruncate, off_t len)
FD_WRAPPER(ftruncate64, off64_t len)
FD_WRAPPER(fallocate, int mode, off_t offset, off_t len)
FD_WRAPPER(fallocate64, int mode, off64_t offset, off64_t len)

int rename(const char *from, const char *to) {
    int (*f)(const char *, const char *) = real("rename");
    if (under_dir(from) || under_dir(to)) {
        switch (next_action()) {
        case FAIL:
            errno = fault_errno;
            return -1;
        case CRASH:
            if (seed & 1)
                f(from, to);
            crash();
        case GO:
            break;
        }
    }
    return f(from, to);
}
