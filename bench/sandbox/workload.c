/* Workloads for scripts/bench-sandbox: the same processes measured by mccbuild's sandbox and by
 * BenchExec's runexec.
 *
 *   workload true              exit 0 at once
 *   workload cpu S             burn S seconds of CPU (CLOCK_PROCESS_CPUTIME_ID)
 *   workload alloc MB          allocate MB MiB, touch every page, exit
 *   workload children N S      N children one after the other, each burning S s of CPU
 *   workload orphan S          fork a child that forks a grandchild burning S s of CPU; the child
 *                              and the parent exit at once (the grandchild is orphaned)
 *   workload hold N MB         N children each touching MB MiB and holding it ~1 s, all at the
 *                              same time; the parent waits for them
 *   workload loop              burn CPU forever
 *   workload hog               allocate and touch memory forever (1 MiB at a time, printing
 *                              self_cpu after each)
 *
 * Modes that end by themselves print `self_cpu=SECONDS` last: the CPU time the workload counted
 * itself (getrusage of itself and of the children it waited for, user + system). The benchmark
 * pairs it with each tool's figure for the same run, which cancels the run-to-run variation of
 * the workload (page faults cost more or less system time from one run to the next).
 *
 * Built by scripts/bench-sandbox with gcc -O2.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

static volatile unsigned long sink;

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burn(double seconds) {
    double start = cpu_now();
    unsigned long x = 1;
    while (cpu_now() - start < seconds) {
        for (int i = 0; i < 10000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
        sink = x;
    }
}

static char *touch(size_t mib) {
    size_t len = mib << 20;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(3); }
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < len; i += page) p[i] = (char)i | 1;
    return p;
}

static void sleep_s(double s) {
    struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0) {}
}

static void wait_all(void) {
    while (wait(NULL) > 0) {}
}

static double rusage_s(int who) {
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int done(void) {
    printf("self_cpu=%.6f\n", rusage_s(RUSAGE_SELF) + rusage_s(RUSAGE_CHILDREN));
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: workload true | cpu S | alloc MB | children N S | orphan S | "
                    "hold N MB | loop | hog\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *mode = argv[1];
    if (!strcmp(mode, "true")) return done();
    if (!strcmp(mode, "cpu") && argc == 3) { burn(atof(argv[2])); return done(); }
    if (!strcmp(mode, "alloc") && argc == 3) { touch(atol(argv[2])); return done(); }
    if (!strcmp(mode, "children") && argc == 4) {
        int n = atoi(argv[2]);
        double s = atof(argv[3]);
        for (int i = 0; i < n; i++) {
            pid_t pid = fork();
            if (pid < 0) { perror("fork"); return 3; }
            if (pid == 0) { burn(s); _exit(0); }
            waitpid(pid, NULL, 0);
        }
        return done();
    }
    if (!strcmp(mode, "orphan") && argc == 3) {
        double s = atof(argv[2]);
        pid_t child = fork();
        if (child < 0) { perror("fork"); return 3; }
        if (child == 0) {
            pid_t grandchild = fork();
            if (grandchild == 0) { burn(s); _exit(0); }
            _exit(0); /* the child exits at once, orphaning the grandchild */
        }
        waitpid(child, NULL, 0);
        return done(); /* and so does the parent */
    }
    if (!strcmp(mode, "hold") && argc == 4) {
        int n = atoi(argv[2]);
        size_t mib = atol(argv[3]);
        for (int i = 0; i < n; i++) {
            pid_t pid = fork();
            if (pid < 0) { perror("fork"); return 3; }
            if (pid == 0) { touch(mib); sleep_s(1.0); _exit(0); }
        }
        wait_all();
        return done();
    }
    if (!strcmp(mode, "loop")) { for (;;) burn(1.0); }
    if (!strcmp(mode, "hog")) {
        /* unbuffered: the last line before the kill is the CPU time counted up to then */
        setvbuf(stdout, NULL, _IONBF, 0);
        for (;;) { touch(1); done(); }
    }
    usage();
    return 2;
}
