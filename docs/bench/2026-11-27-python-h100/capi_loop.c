/* Issue 18, runs 83 and 84: the C API's own host cost per call (no Python): stof_run,
 * stof_run_views (packed, NULL strides) and (version 5, run 84 on) stof_run_bound of a plan, B1 H12 L128 d64, a band mask
 * (|i - j| < 32), the automatic choice; us per call, best of 5 x 20000 calls, a stream
 * synchronize every 1024 calls. Build: gcc -O2 capi_loop.c -I kernels/capi
 * -I/usr/local/cuda/include -L BUILD/kernels -lstof_capi -L/usr/local/cuda/lib64 -lcudart */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "stof_capi.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(void) {
  enum { B = 1, H = 12, L = 128, D = 64, N = 20000 };
  static unsigned char mask[L * L];
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < L; ++j) mask[i * L + j] = abs(i - j) < 32;
  char err[1024];
  stof_plan* plan = NULL;
  if (stof_prepare(mask, B, H, L, D, STOF_KERNEL_AUTO, 0, 0, 0, 0, &plan, err, sizeof err)) {
    printf("prepare: %s\n", err);
    return 1;
  }
  stof_choice(plan, NULL, NULL, NULL, NULL, NULL, err, sizeof err);
  printf("choice: %s\n", err);
  void *q, *k, *v, *o;
  size_t bytes = (size_t)B * H * L * D * 2;
  cudaMalloc(&q, bytes), cudaMalloc(&k, bytes), cudaMalloc(&v, bytes), cudaMalloc(&o, bytes);
  cudaStream_t s;
  cudaStreamCreate(&s);
#if STOF_CAPI_VERSION >= 5
  stof_bound* bound = NULL;
  if (stof_bind_views(plan, B, H, NULL, NULL, NULL, 0.0f, &bound, err, sizeof err)) {
    printf("bind: %s\n", err);
    return 1;
  }
  const int ways = 3;
#else
  const int ways = 2;
#endif
  static const char* names[3] = {"stof_run", "stof_run_views", "stof_run_bound"};
  for (int way = 0; way < ways; ++way) {
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
      double t0 = now_us();
      for (int i = 0; i < N; ++i) {
        int rc = way == 0   ? stof_run(plan, q, k, v, o, s, err, sizeof err)
                 : way == 1 ? stof_run_views(plan, q, k, v, o, B, H, NULL, NULL, NULL, 0.0f, s,
                                             err, sizeof err)
#if STOF_CAPI_VERSION >= 5
                            : stof_run_bound(bound, q, k, v, o, s, err, sizeof err);
#else
                            : 1;
#endif
        if (rc) { printf("run: %s\n", err); return 1; }
        if ((i & 1023) == 1023) cudaStreamSynchronize(s);
      }
      double us = (now_us() - t0) / N;
      if (us < best) best = us;
    }
    printf("%-16s %6.3f us per call (host)\n", names[way], best);
  }
  cudaStreamSynchronize(s);
#if STOF_CAPI_VERSION >= 5
  stof_bound_release(bound);
#endif
  stof_release(plan);
  return 0;
}
