/* input.c -- see input.h. */
#define _GNU_SOURCE
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* What a path that is not a regular file is, as the end of "it is ...". */
static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a folder, not a file";
    if (S_ISFIFO(m))
        return "a named pipe, not a regular file";
    if (S_ISSOCK(m))
        return "a socket, not a regular file";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device, not a regular file";
    return "not a regular file";
}

/* Closes fd (when open) and returns -1 with errno err and why "it is <what>", or the
   system's words for err when what is NULL. */
static int fail(int fd, int err, char *why, size_t n, const char *what)
{
    if (fd >= 0)
        close(fd);
    if (what)
        snprintf(why, n, "it is %s", what);
    else
        snprintf(why, n, "%s", strerror(err));
    errno = err;
    return -1;
}

int kbc_input_open(const char *path, uint64_t max, char *why, size_t n)
{
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
       writer, for ever.  The type is then told from the open descriptor,
       so that the file checked is the file read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        struct stat st;
        /* A socket cannot be opened at all (ENXIO): say what it is. */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            return fail(-1, EINVAL, why, n, kind_of(st.st_mode));
        return fail(-1, err, why, n, NULL);
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(fd, errno, why, n, NULL);
    if (!S_ISREG(st.st_mode))
        return fail(fd, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, why, n, kind_of(st.st_mode));
    if ((uint64_t)st.st_size > max) {
        char have[32], limit[32];
        char what[100];
        snprintf(what, sizeof what, "%s, over the %s that kbench reads from such a file",
                 kbc_human_bytes((uint64_t)st.st_size, have, sizeof have),
                 kbc_human_bytes(max, limit, sizeof limit));
        return fail(fd, EFBIG, why, n, what);
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        return fail(fd, errno, why, n, NULL);
    return fd;
}

FILE *kbc_input_fopen(const char *path, uint64_t max, char *why, size_t n)
{
    int fd = kbc_input_open(path, max, why, n);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "r");
    if (!f)
        fail(fd, errno, why, n, NULL);
    return f;
}
