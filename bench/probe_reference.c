/* An independent compiled reference for `topology probe` latencies (bench/probe.py).
 *
 *   probe_reference CPU_A CPU_B ROUNDS SAMPLES [two-lines]
 *       -> one line per sample: one-way latency (ns), a round trip over 2
 *
 * Default: one cache line passed back and forth by compare-and-swap (A swaps 2i -> 2i+1, B swaps
 * 2i+1 -> 2i+2), the method of the common core-to-core latency tools; the probe's helper uses
 * plain release stores and acquire loads instead.  `two-lines`: one line per direction (A stores
 * `i` into `ping` and waits for `pong == i`; B waits for `ping == i` and stores `i` into `pong`),
 * the pattern of a ring's separate head and tail indices: each direction then needs the line's
 * ownership back as well as its data, so it costs more than one transfer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Alignas(128) atomic_long flag;
static _Alignas(128) atomic_long ping;
static _Alignas(128) atomic_long pong;
static long total;
static int two_lines;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) { perror("pin"); exit(3); }
}

static void *responder(void *arg) {
    pin(*(int *)arg);
    for (long i = 0; i < total; i++) {
        if (two_lines) {
            while (atomic_load_explicit(&ping, memory_order_acquire) != i + 1) {}
            atomic_store_explicit(&pong, i + 1, memory_order_release);
        } else {
            long expected = 2 * i + 1;
            while (!atomic_compare_exchange_weak(&flag, &expected, 2 * i + 2)) expected = 2 * i + 1;
        }
    }
    return NULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) { fprintf(stderr, "usage: probe_reference CPU_A CPU_B ROUNDS SAMPLES [two-lines]\n"); return 2; }
    int a = atoi(argv[1]), b = atoi(argv[2]);
    long rounds = atol(argv[3]);
    int samples = atoi(argv[4]);
    two_lines = argc == 6 && strcmp(argv[5], "two-lines") == 0;
    total = rounds * (samples + 1);
    pthread_t t;
    pthread_create(&t, NULL, responder, &b);
    pin(a);
    long i = 0;
    for (int s = -1; s < samples; s++) { /* sample -1 warms up, unreported */
        double t0 = now_ns();
        for (long r = 0; r < rounds; r++, i++) {
            if (two_lines) {
                atomic_store_explicit(&ping, i + 1, memory_order_release);
                while (atomic_load_explicit(&pong, memory_order_acquire) != i + 1) {}
            } else {
                long expected = 2 * i;
                while (!atomic_compare_exchange_weak(&flag, &expected, 2 * i + 1)) expected = 2 * i;
            }
        }
        if (!two_lines) while (atomic_load(&flag) != 2 * i) {}
        double t1 = now_ns();
        if (s >= 0) printf("%.3f\n", (t1 - t0) / (2.0 * (double)rounds));
    }
    pthread_join(t, NULL);
    return 0;
}
