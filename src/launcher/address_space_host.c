/* leanmpi-host: ranks of one node in one address space
 * (mpirun --address-space=shared).
 *
 * mpirun starts one host per group of ranks instead of one process per
 * rank. The host loads the program once per rank, each copy in a link-map
 * namespace of its own (dlmopen), so that every rank has its own globals,
 * heap, C library (stdio buffers, atexit handlers, environment) and
 * libleanmpi; then it starts each rank's main as a task of its own with
 * clone(CLONE_VM): its own process id, exit status and signals, all of
 * them in the host's address space, where any rank can read and write any
 * other's memory.
 *
 * A task needs a thread control block of its own (errno and the rest of
 * the C libraries' thread-local storage, the stack protector's canary):
 * each rank gets one from a thread the host creates for it, which then
 * only waits; the task runs on a stack of its own with that thread's
 * block (CLONE_SETTLS), and the block's thread id is set to the task's
 * (CLONE_CHILD_SETTID), so that signals the C library sends to "this
 * thread" (raise, abort) reach the task. The tasks are mpirun's children
 * (CLONE_PARENT): mpirun reaps and reports them like any rank.
 *
 * Interface (set by mpirun, src/launcher/spawn.c): argv is the program's
 * (argv[0] as the user gave it), LEANMPI_HOST_PROGRAM its resolved path;
 * LEANMPI_HOST_RANKS="rank,local,in,out,err,ctl,cpus;..." the
 * ranks, the descriptors each gets as 0, 1, 2 and LEANMPI_AGENT_FD, and
 * the CPUs it is bound to (numbers joined by '.', "-" for none: mpirun
 * --rankfile);
 * LEANMPI_HOST_REPORT the descriptor that gets "rank pid" per started rank
 * (or "error MESSAGE"); LEANMPI_HOST_LAUNCHER mpirun's pid. glibc allows 16
 * namespaces per process (mpirun sets GLIBC_TUNABLES=glibc.rtld.nns); a
 * group holds at most 15 ranks.
 *
 * A program that cannot be loaded this way is refused with the reason
 * (program_image.h). glibc refuses to dlopen an executable marked PIE
 * (DF_1_PIE); the host loads a copy of it in an anonymous memory file with
 * that mark cleared, which changes nothing else. The dynamic loader
 * carries out a program's copy relocations (data of a library the program
 * refers to directly: stdout, stderr, environ) for a process's main
 * program only; in a namespace the program's copies would stay zero while
 * every library uses them, so the host copies their first values. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "program_image.h"

#define MAX_RANKS 15
#define TASK_STACK (8u << 20)

typedef int (*main_fn)(int, char **, char **);

typedef struct task {
    int rank, local, fd[4]; /* in, out, err, ctl */
    void *handle;
    main_fn main;
    void (*exit)(int);
    void (*ctype_init)(void);
    char **env;
    pid_t pid;
    pthread_t holder;
    int started;    /* 1 started, -1 failed */
    cpu_set_t cpus; /* bound to these (none: unbound) */
} task;

static task tasks[MAX_RANKS];
static int ntasks, report_fd = -1, argc_prog;
static char **argv_prog;
static pid_t launcher;
/* Opened once every task exists: a task touches nothing but its own stack
 * before it, so no rank runs (into the dynamic loader, say) while the host
 * still creates threads and tasks. */
static int gate;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;

static void report_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void report_error(const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    dprintf(report_fd >= 0 ? report_fd : 2, "error %s\n", text);
    _exit(127);
}

/* ---- the program ---- */

static lm_program_image image;

/* The program, checked and made loadable (program_image.h), in a memory
 * file of this process: the path to dlmopen it by. */
static void load_image(const char *path, char *out_path, size_t cap)
{
    char why[600];
    if (lm_program_image_read(path, &image, why, sizeof why) != 0) report_error("%s", why);
    int mfd = memfd_create("leanmpi-host-program", MFD_CLOEXEC);
    if (mfd < 0 || write(mfd, image.bytes, image.len) != (ssize_t)image.len)
        report_error("cannot copy the program: %s", strerror(errno));
    snprintf(out_path, cap, "/proc/self/fd/%d", mfd);
}

/* "NAME=value" of every variable but those for the host, then the rank's. */
static char **rank_env(const task *t)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 4, sizeof *env);
    if (!env) report_error("out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LEANMPI_HOST_", 13) && strncmp(environ[i], "LEANMPI_RANK=", 13) &&
            strncmp(environ[i], "LEANMPI_LOCAL_RANK=", 19) && strncmp(environ[i], "LEANMPI_AGENT_FD=", 17))
            env[k++] = environ[i];
    char buf[64];
    snprintf(buf, sizeof buf, "LEANMPI_RANK=%d", t->rank);
    env[k++] = strdup(buf);
    snprintf(buf, sizeof buf, "LEANMPI_LOCAL_RANK=%d", t->local);
    env[k++] = strdup(buf);
    if (t->fd[3] >= 0) {
        snprintf(buf, sizeof buf, "LEANMPI_AGENT_FD=%d", t->fd[3]);
        env[k++] = strdup(buf);
    }
    return env;
}

static int in_relro(const lm_copy_reloc *c)
{
    return image.relro_size && c->at < image.relro_at + image.relro_size && c->at + c->size > image.relro_at;
}

/* Carry out the program's copy relocations in one namespace: each
 * datum's first value, from the library after the program that defines it. */
static void copy_data(task *t, struct link_map *prog)
{
    Lmid_t ns;
    if (dlinfo(t->handle, RTLD_DI_LMID, &ns) != 0) report_error("no namespace for rank %d", t->rank);
    for (int i = 0; i < image.ncopies; i++) {
        const lm_copy_reloc *c = &image.copies[i];
        char *to = (char *)(uintptr_t)(prog->l_addr + c->at);
        const void *from = NULL;
        for (struct link_map *m = prog->l_next; m && !from; m = m->l_next) {
            void *h = dlmopen(ns, m->l_name, RTLD_LAZY | RTLD_NOLOAD);
            if (!h) continue;
            const void *v = dlsym(h, c->name);
            if (v && v != to) from = v;
            dlclose(h);
        }
        if (!from) report_error("rank %d: no library defines %s (a copy relocation of the program)", t->rank, c->name);
        if (in_relro(c)) {
            /* the loader made it read-only already: open its pages for the copy */
            uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
            uintptr_t lo = (uintptr_t)to & ~(page - 1), hi = ((uintptr_t)to + c->size + page - 1) & ~(page - 1);
            if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) != 0)
                report_error("rank %d: cannot write %s of the program: %s", t->rank, c->name, strerror(errno));
            memcpy(to, from, c->size);
            mprotect((void *)lo, hi - lo, PROT_READ);
        } else {
            memcpy(to, from, c->size);
        }
    }
}

static void load_ranks(const char *path)
{
    for (int i = 0; i < ntasks; i++) {
        task *t = &tasks[i];
        t->handle = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
        if (!t->handle)
            report_error("cannot load the program for rank %d (%d namespaces): %s", t->rank, i + 1, dlerror());
        struct link_map *lm = NULL;
        if (dlinfo(t->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) report_error("no link map for rank %d", t->rank);
        t->main = (main_fn)(uintptr_t)(lm->l_addr + image.main_at);
        copy_data(t, lm);
        t->exit = (void (*)(int))(uintptr_t)dlsym(t->handle, "exit");
        t->ctype_init = (void (*)(void))(uintptr_t)dlsym(t->handle, "__ctype_init");
        char ***env = dlsym(t->handle, "environ");
        if (!t->exit || !env) report_error("rank %d's C library is not reachable in its namespace", t->rank);
        t->env = rank_env(t);
        *env = t->env; /* the rank's getenv reads its own C library's environ */
    }
}

/* ---- the tasks ---- */

/* Runs as the rank's task, on its own stack, with its holder thread's
 * control block. Never returns. */
static int rank_main(void *arg)
{
    task *t = arg;
    while (!__atomic_load_n(&gate, __ATOMIC_ACQUIRE)) syscall(SYS_futex, &gate, FUTEX_WAIT, 0, NULL, NULL, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* mpirun's child: it must not outlive mpirun */
    if (getppid() != launcher) _exit(127);
    for (int s = 0; s < 3; s++)
        if (dup2(t->fd[s], s) < 0) _exit(127);
    for (int i = 0; i < ntasks; i++) /* the other ranks' descriptors are theirs */
        for (int s = 0; s < 4; s++)
            if (tasks[i].fd[s] > 2 && (i != t - tasks || s < 3)) close(tasks[i].fd[s]);
    if (report_fd >= 0) close(report_fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* the thread-local pointers of the rank's C library that its own
     * thread start would set (ctype tables: without them printf of a
     * double faults) */
    if (t->ctype_init) t->ctype_init();
    int rc = t->main(argc_prog, argv_prog, t->env);
    t->exit(rc); /* the rank's own C library: its atexit handlers, its buffers */
    _exit(rc);
}

/* The host's main thread's control block (its thread id is the pid). */
static const char *main_tcb;

/* The thread id's place in a thread control block: where this thread's
 * block holds this thread's id and the main thread's block the main
 * thread's. Both, since half of a pointer there can equal one thread id
 * (0x7f.. is a pid where pid_max is 32768). */
static size_t find_tid_offset(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid), main_tid = getpid();
    const char *self = (const char *)pthread_self();
    for (size_t off = 16; off < 2048; off += sizeof(pid_t))
        if (*(const pid_t *)(self + off) == tid && *(const pid_t *)(main_tcb + off) == main_tid) return off;
    return 0;
}

/* Holds a control block for one rank's task: starts the task with it and
 * then waits, never touching it again. */
static void *holder(void *arg)
{
    task *t = arg;
    size_t off = find_tid_offset();
    char *stack = mmap(NULL, TASK_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    pid_t pid = -1;
    if (off && stack != MAP_FAILED) {
        char *self = (char *)pthread_self();
        pid = clone(rank_main, stack + TASK_STACK,
                    CLONE_VM | CLONE_PARENT | CLONE_SETTLS | CLONE_CHILD_SETTID | SIGCHLD, t, NULL, self,
                    (pid_t *)(self + off));
    }
    pthread_mutex_lock(&start_lock);
    t->pid = pid;
    t->started = pid > 0 ? 1 : -1;
    pthread_cond_broadcast(&start_cond);
    pthread_mutex_unlock(&start_lock);
    for (;;) pause();
    return NULL;
}

/* "1.3" -> CPUs 1 and 3; "-" -> none (an empty set: unbound). */
static int parse_cpus(const char *p, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (*p == '-') return 0;
    for (;;) {
        char *end;
        long c = strtol(p, &end, 10);
        if (end == p || c < 0 || c >= CPU_SETSIZE) return -1;
        CPU_SET((int)c, set);
        if (*end != '.') return 0;
        p = end + 1;
    }
}

static void parse_ranks(const char *spec)
{
    for (const char *p = spec; p && *p && ntasks < MAX_RANKS; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
        task *t = &tasks[ntasks];
        int used = 0;
        if (sscanf(p, "%d,%d,%d,%d,%d,%d,%n", &t->rank, &t->local, &t->fd[0], &t->fd[1], &t->fd[2], &t->fd[3], &used) !=
                6 ||
            !used || parse_cpus(p + used, &t->cpus) != 0)
            report_error("bad LEANMPI_HOST_RANKS entry '%.40s'", p);
        ntasks++;
    }
    if (ntasks == 0) report_error("LEANMPI_HOST_RANKS names no rank");
}

int main(int argc, char **argv)
{
    const char *fd = getenv("LEANMPI_HOST_REPORT"), *ranks = getenv("LEANMPI_HOST_RANKS"),
               *by = getenv("LEANMPI_HOST_LAUNCHER"), *program = getenv("LEANMPI_HOST_PROGRAM");
    report_fd = fd ? atoi(fd) : -1;
    if (argc < 2 || !ranks || !by || !program) report_error("leanmpi-host is started by mpirun --address-space=shared");
    launcher = (pid_t)atoi(by);
    main_tcb = (const char *)pthread_self();
    parse_ranks(ranks);
    argc_prog = argc - 1;
    argv_prog = argv + 1;
    char path[64];
    load_image(program, path, sizeof path);
    load_ranks(path);
    for (int i = 0; i < ntasks; i++) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 << 10);
        if (pthread_create(&tasks[i].holder, &attr, holder, &tasks[i]) != 0)
            report_error("cannot create the thread of rank %d", tasks[i].rank);
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_lock(&start_lock);
    for (int i = 0; i < ntasks; i++)
        while (!tasks[i].started) pthread_cond_wait(&start_cond, &start_lock);
    pthread_mutex_unlock(&start_lock);
    for (int i = 0; i < ntasks; i++)
        if (tasks[i].started < 0) report_error("cannot start rank %d as a task: %s", tasks[i].rank, strerror(errno));
    /* bound before they run: the tasks wait at the gate */
    for (int i = 0; i < ntasks; i++)
        if (CPU_COUNT(&tasks[i].cpus) > 0 && sched_setaffinity(tasks[i].pid, sizeof tasks[i].cpus, &tasks[i].cpus) != 0)
            report_error("cannot bind rank %d to its CPUs: %s", tasks[i].rank, strerror(errno));
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &gate, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    for (int i = 0; i < ntasks; i++) dprintf(report_fd, "%d %d\n", tasks[i].rank, (int)tasks[i].pid);
    close(report_fd);
    /* the ranks' descriptors are theirs now */
    for (int i = 0; i < ntasks; i++)
        for (int s = 0; s < 4; s++)
            if (tasks[i].fd[s] > 2) close(tasks[i].fd[s]);
    /* the address space lives while a rank does: wait for them all (they
     * are mpirun's children, so through process descriptors) */
    struct pollfd pf[MAX_RANKS];
    int n = 0;
    for (int i = 0; i < ntasks; i++) {
        int p = (int)syscall(SYS_pidfd_open, tasks[i].pid, 0);
        if (p >= 0) pf[n++] = (struct pollfd){.fd = p, .events = POLLIN};
    }
    while (n > 0) {
        if (poll(pf, (nfds_t)n, -1) < 0 && errno != EINTR) break;
        for (int i = 0; i < n; i++)
            if (pf[i].revents) {
                close(pf[i].fd);
                pf[i--] = pf[--n];
            }
    }
    return 0;
}
