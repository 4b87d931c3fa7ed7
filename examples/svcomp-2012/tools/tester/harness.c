/* The tester's harness: runs the task's main (renamed __task_main) many times, each in a forked
 * child whose __VERIFIER_nondet_* calls return pseudo-random values (from a seed per run, so
 * the tester is deterministic). The label ERROR was instrumented to call __tester_error(), which
 * ends the child with ERROR_EXIT after printing the inputs of the run (the error path) on the
 * tester's stderr. __VERIFIER_assume(0) ends the child as a discarded run. The definitions are
 * weak: a task that defines one of these functions itself keeps its own. */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#define ERROR_EXIT 77
#define ASSUME_EXIT 78
#define TRACE_MAX 64
#define WITNESS_FD 100

int __task_main();

static uint64_t rng;
static long long trace[TRACE_MAX];
static int trace_len, trace_total;

static uint64_t next(void)
{
    /* splitmix64 */
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value in [lo, hi]: small values and boundaries often, uniform ones otherwise. */
static long long pick(long long lo, long long hi)
{
    long long v;
    switch (next() % 8) {
    case 0: case 1: case 2:
        v = (long long)(next() % 13) - 2;          /* -2 .. 10 */
        break;
    case 3:
        v = 0;
        break;
    case 4: {
        long long edges[4] = { lo, hi, -1, 1 };
        v = edges[next() % 4];
        break;
    }
    default: {
        uint64_t span = (uint64_t)(hi - lo);
        v = span == UINT64_MAX ? (long long)next() : lo + (long long)(next() % (span + 1));
    }
    }
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    if (trace_len < TRACE_MAX)
        trace[trace_len++] = v;
    trace_total++;
    return v;
}

#define WEAK __attribute__((weak))
WEAK int __VERIFIER_nondet_int(void) { return (int)pick(INT_MIN, INT_MAX); }
WEAK unsigned int __VERIFIER_nondet_uint(void) { return (unsigned int)pick(0, UINT_MAX); }
WEAK short __VERIFIER_nondet_short(void) { return (short)pick(SHRT_MIN, SHRT_MAX); }
WEAK unsigned short __VERIFIER_nondet_ushort(void) { return (unsigned short)pick(0, USHRT_MAX); }
WEAK char __VERIFIER_nondet_char(void) { return (char)pick(CHAR_MIN, CHAR_MAX); }
WEAK unsigned char __VERIFIER_nondet_uchar(void) { return (unsigned char)pick(0, UCHAR_MAX); }
WEAK long __VERIFIER_nondet_long(void) { return (long)pick(LONG_MIN, LONG_MAX); }
WEAK _Bool __VERIFIER_nondet_bool(void) { return pick(0, 1) != 0; }
WEAK float __VERIFIER_nondet_float(void) { return (float)pick(-1000, 1000); }
WEAK void *__VERIFIER_nondet_pointer(void) { return (void *)0; }
/* The deprecated names of SV-COMP 2012. */
WEAK int nondet_int(void) { return (int)pick(INT_MIN, INT_MAX); }

WEAK void __VERIFIER_assume(int cond)
{
    if (!cond)
        _exit(ASSUME_EXIT);
}

void __tester_error(void)
{
    char line[64];
    int n = snprintf(line, sizeof line, "error path: %d input(s):", trace_total);
    (void)!write(WITNESS_FD, line, (size_t)n);
    for (int i = 0; i < trace_len; i++) {
        n = snprintf(line, sizeof line, " %lld", trace[i]);
        (void)!write(WITNESS_FD, line, (size_t)n);
    }
    (void)!write(WITNESS_FD, "\n", 1);
    _exit(ERROR_EXIT);
}

WEAK void __VERIFIER_error(void) { __tester_error(); }

static double children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
    long runs = argc > 1 ? atol(argv[1]) : 10000;
    double budget = argc > 2 ? atof(argv[2]) : 5.0;
    double run_cpu = argc > 3 ? atof(argv[3]) : 0.2;
    long discarded = 0, ended = 0, killed = 0;
    dup2(2, WITNESS_FD);
    int null = open("/dev/null", O_WRONLY);
    for (long i = 0; i < runs; i++) {
        if (i % 64 == 0 && children_cpu() > budget) {
            fprintf(stderr, "tester: CPU budget of %.1f s spent after %ld runs\n", budget, i);
            break;
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("tester: fork");
            break;
        }
        if (pid == 0) {
            rng = 0x5eed0000ULL + (uint64_t)i * 0x100000001b3ULL;
            struct itimerval t = { { 0, 0 }, { (long)run_cpu, (long)((run_cpu - (long)run_cpu) * 1e6) } };
            setitimer(ITIMER_VIRTUAL, &t, NULL);    /* a run looping for ever is killed */
            dup2(null, 0);
            dup2(null, 1);                          /* the task's own output is dropped */
            dup2(null, 2);
            __task_main();
            _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0) {
            perror("tester: waitpid");
            break;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == ERROR_EXIT) {
            fprintf(stderr, "tester: ERROR reached in run %ld\n", i);
            puts("UNSAFE");
            return 0;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == ASSUME_EXIT)
            discarded++;
        else if (WIFEXITED(status))
            ended++;
        else
            killed++;
    }
    fprintf(stderr, "tester: ERROR not reached (%ld runs ended, %ld discarded by __VERIFIER_assume, %ld killed)\n",
            ended, discarded, killed);
    puts("UNKNOWN");
    return 0;
}
