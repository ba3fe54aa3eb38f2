/*
 * child.c -- a program started with one of its output streams into a pipe
 * (child.h).
 */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t kbc_child_start(char *const argv[], const char *dir, int out_fd, int quiet, int *rd)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], out_fd) < 0 || (dir && chdir(dir) != 0))
            _exit(127);
        if (quiet) {
            int null = open("/dev/null", O_RDWR);
            if (null >= 0) {
                dup2(null, STDIN_FILENO);
                dup2(null, out_fd == STDOUT_FILENO ? STDERR_FILENO : STDOUT_FILENO);
                close(null);
            }
        }
        if (fd[1] != out_fd)
            close(fd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    *rd = fd[0];
    return pid;
}

int kbc_child_wait(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
