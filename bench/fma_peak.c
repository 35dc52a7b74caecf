// FP32 FMA peak of this CPU: independent 512-bit (or 256-bit) FMA chains per thread.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Build and run: cc -O2 -march=native -pthread bench/fma_peak.c -o /tmp/fma_peak && /tmp/fma_peak 2
// Prints GFLOP/s per thread count (best of 5 rounds); the roof for bench/tune_cpu.py ratios.
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS 12
#define ITERATIONS 20000000L
#ifdef __AVX512F__
typedef __m512 vec;
#define LANES 16
#define FMA _mm512_fmadd_ps
#define SET1 _mm512_set1_ps
#define SUM(v) _mm512_reduce_add_ps(v)
#else
typedef __m256 vec;
#define LANES 8
#define FMA _mm256_fmadd_ps
#define SET1 _mm256_set1_ps
static float SUM(__m256 v) { float f[8]; _mm256_storeu_ps(f, v); return f[0]; }
#endif

// Twelve named accumulators, so they stay in registers (an array spills).
#define STEP(x) x = FMA(x, a, b)
static void *chains(void *out) {
  vec a = SET1(0.999999f), b = SET1(1e-7f);
  vec x0 = SET1(0), x1 = SET1(1), x2 = SET1(2), x3 = SET1(3), x4 = SET1(4), x5 = SET1(5);
  vec x6 = SET1(6), x7 = SET1(7), x8 = SET1(8), x9 = SET1(9), x10 = SET1(10), x11 = SET1(11);
  for (long i = 0; i < ITERATIONS; ++i) {
    STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5);
    STEP(x6); STEP(x7); STEP(x8); STEP(x9); STEP(x10); STEP(x11);
  }
  *(float *)out = SUM(x0) + SUM(x1) + SUM(x2) + SUM(x3) + SUM(x4) + SUM(x5) + SUM(x6) +
                  SUM(x7) + SUM(x8) + SUM(x9) + SUM(x10) + SUM(x11);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    pthread_t t[256];
    float sink[256];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; ++i)
      pthread_create(&t[i], NULL, chains, &sink[i]);
    for (int i = 0; i < threads; ++i)
      pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    double gflops = 2.0 * LANES * CHAINS * ITERATIONS * threads / s / 1e9;
    if (gflops > best)
      best = gflops;
  }
  printf("fma peak: %d threads, %d lanes, %.1f GFLOP/s\n", threads, LANES, best);
  return 0;
}
