/* tasksolve topology probe helper (built on first use with the system C compiler).
 *
 *   probe lat CPU_A CPU_B ROUNDS BATCHES   one line per batch: one-way latency (ns) of a cache
 *                                          line bounced ROUNDS times between two pinned threads
 *   probe loop SECONDS CPU [CPU ...]       one line per CPU: iterations/s of a compute loop run on
 *                                          all the listed CPUs at once (one pinned thread each), and
 *                                          the share of the wall time the thread ran (its CPU time
 *                                          over the wall time: below 1, another process shared it)
 *
 * The line is written by one thread and read by the other with release/acquire atomics (no
 * read-modify-write, no pause instruction, which alone costs ~100 cycles on recent cores); a
 * round trip is two one-way transfers.  Exit status 2 on bad arguments, 3 when pinning fails.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
    _Alignas(128) atomic_long value;
    char pad[128 - sizeof(atomic_long)];
} line;
static atomic_int started;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct pong_args { int cpu; long total; };

static void *pong(void *p) {
    struct pong_args *a = p;
    if (pin(a->cpu) != 0) { fprintf(stderr, "cannot pin to CPU %d\n", a->cpu); exit(3); }
    atomic_store(&started, 1);
    for (long v = 1; v < 2 * a->total; v += 2) {
        while (atomic_load_explicit(&line.value, memory_order_acquire) != v) {}
        atomic_store_explicit(&line.value, v + 1, memory_order_release);
    }
    return NULL;
}

static int latency(int a, int b, long rounds, int batches) {
    struct pong_args args = {b, rounds * (batches + 1)};
    pthread_t t;
    atomic_store(&line.value, 0);
    if (pthread_create(&t, NULL, pong, &args) != 0) return 3;
    if (pin(a) != 0) { fprintf(stderr, "cannot pin to CPU %d\n", a); return 3; }
    while (!atomic_load(&started)) {}
    long v = 0;
    for (int batch = -1; batch < batches; batch++) { /* batch -1 warms the line up, unreported */
        double t0 = now_ns();
        for (long r = 0; r < rounds; r++) {
            atomic_store_explicit(&line.value, v + 1, memory_order_release);
            while (atomic_load_explicit(&line.value, memory_order_acquire) != v + 2) {}
            v += 2;
        }
        double t1 = now_ns();
        if (batch >= 0) printf("%.3f\n", (t1 - t0) / (2.0 * (double)rounds));
    }
    pthread_join(t, NULL);
    return 0;
}

struct loop_args { int cpu; double seconds; double rate; double share; };

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static atomic_int ready, go;

static void *spin(void *p) {
    struct loop_args *a = p;
    if (pin(a->cpu) != 0) { fprintf(stderr, "cannot pin to CPU %d\n", a->cpu); exit(3); }
    atomic_fetch_add(&ready, 1);
    while (!atomic_load(&go)) {}
    unsigned long x = 88172645463325252UL, count = 0;
    double c0 = cpu_ns(), t0 = now_ns(), deadline = t0 + a->seconds * 1e9, t = t0;
    while (t < deadline) {
        for (int i = 0; i < 4096; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
        count += 4096;
        t = now_ns();
    }
    a->rate = (double)count / ((t - t0) / 1e9) + (double)(x & 1) * 1e-9;
    a->share = (cpu_ns() - c0) / (t - t0);
    return NULL;
}

static int loop(double seconds, int n, char **cpus) {
    struct loop_args *args = calloc((size_t)n, sizeof *args);
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    for (int i = 0; i < n; i++) {
        args[i].cpu = atoi(cpus[i]);
        args[i].seconds = seconds;
        if (pthread_create(&threads[i], NULL, spin, &args[i]) != 0) return 3;
    }
    while (atomic_load(&ready) < n) {}
    atomic_store(&go, 1);
    for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < n; i++) printf("%.1f %.4f\n", args[i].rate, args[i].share);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "lat") == 0)
        return latency(atoi(argv[2]), atoi(argv[3]), atol(argv[4]), atoi(argv[5]));
    if (argc >= 4 && strcmp(argv[1], "loop") == 0)
        return loop(atof(argv[2]), argc - 3, argv + 3);
    fprintf(stderr, "usage: probe lat CPU_A CPU_B ROUNDS BATCHES | probe loop SECONDS CPU [CPU ...]\n");
    return 2;
}
