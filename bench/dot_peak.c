// The CPU's dot-product peaks: loops of independent vdpbf16ps (AVX-512 BF16)
// and vfmadd231ps (f32 FMA) on zmm registers, on N threads.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// usage: dot_peak THREADS SECONDS -> one line per instruction:
//   bf16-dot GFLOP/s  (vdpbf16ps zmm: 16 lanes x 2 products = 64 FLOPs)
//   f32-fma  GFLOP/s  (vfmadd231ps zmm: 16 lanes = 32 FLOPs)
// Each thread keeps 12 accumulators (more than latency x throughput on
// current x86 cores), so the loop is bound by the instruction's throughput.
// Build: clang -O2 -mavx512f -mavx512bf16 -pthread dot_peak.c (bench/bf16_gemm.py).
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kAccumulators = 12, kInner = 1000 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct {
  int bf16;
  double seconds;
  double flops;
  float sink;
} Job;

static void *run(void *arg) {
  Job *job = arg;
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = _mm512_set1_ps((float)i * 1e-3f);
  __m512 x = _mm512_set1_ps(1e-3f), y = _mm512_set1_ps(-1e-3f);
  __m512bh a = _mm512_cvtne2ps_pbh(x, y), b = _mm512_cvtne2ps_pbh(y, x);
  long iterations = 0;
  double start = now(), end = start + job->seconds;
  while (now() < end) {
    if (job->bf16) {
      for (int n = 0; n < kInner; ++n)
        for (int i = 0; i < kAccumulators; ++i) {
          acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
          __asm__ volatile("" : "+v"(acc[i]));
        }
    } else {
      for (int n = 0; n < kInner; ++n)
        for (int i = 0; i < kAccumulators; ++i) {
          acc[i] = _mm512_fmadd_ps(x, y, acc[i]);
          __asm__ volatile("" : "+v"(acc[i]));
        }
    }
    iterations += kInner;
  }
  double elapsed = now() - start;
  job->flops = (double)iterations * kAccumulators * (job->bf16 ? 64 : 32) / elapsed;
  float sum = 0;
  for (int i = 0; i < kAccumulators; ++i)
    sum += _mm512_reduce_add_ps(acc[i]);
  job->sink = sum;
  return NULL;
}

static double measure(int threads, double seconds, int bf16) {
  pthread_t ids[64];
  Job jobs[64];
  for (int t = 0; t < threads; ++t) {
    jobs[t] = (Job){bf16, seconds, 0, 0};
    pthread_create(&ids[t], NULL, run, &jobs[t]);
  }
  double total = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    total += jobs[t].flops;
  }
  return total / 1e9;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  double seconds = argc > 2 ? atof(argv[2]) : 1.0;
  if (threads < 1 || threads > 64)
    return 1;
  printf("bf16-dot %.1f\n", measure(threads, seconds, 1));
  printf("f32-fma %.1f\n", measure(threads, seconds, 0));
  return 0;
}
