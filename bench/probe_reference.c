/* An independent compiled reference for `topology probe` latencies (bench/probe.py).
 *
 *   probe_reference CPU_A CPU_B ROUNDS SAMPLES   -> one line per sample: one-way latency (ns)
 *
 * Unlike the probe's helper (one line written by both threads in turn), this uses two cache
 * lines, one per direction: A stores `i` into `ping` and spins until `pong == i`; B spins until
 * `ping == i` and stores `i` into `pong`.  A round trip is two one-way transfers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(128) atomic_long ping;
static _Alignas(128) atomic_long pong;
static long total;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) { perror("pin"); exit(3); }
}

static void *responder(void *arg) {
    pin(*(int *)arg);
    for (long i = 1; i <= total; i++) {
        while (atomic_load_explicit(&ping, memory_order_acquire) != i) {}
        atomic_store_explicit(&pong, i, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: probe_reference CPU_A CPU_B ROUNDS SAMPLES\n"); return 2; }
    int a = atoi(argv[1]), b = atoi(argv[2]);
    long rounds = atol(argv[3]);
    int samples = atoi(argv[4]);
    total = rounds * (samples + 1);
    pthread_t t;
    pthread_create(&t, NULL, responder, &b);
    pin(a);
    long i = 0;
    for (int s = -1; s < samples; s++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long r = 0; r < rounds; r++) {
            i++;
            atomic_store_explicit(&ping, i, memory_order_release);
            while (atomic_load_explicit(&pong, memory_order_acquire) != i) {}
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
        if (s >= 0) printf("%.3f\n", ns / (2.0 * rounds));
    }
    pthread_join(t, NULL);
    return 0;
}
