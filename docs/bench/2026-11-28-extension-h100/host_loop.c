/* Issue 18, run 89 on: the C API's own host cost per call from C (no Python), measured the way
 * primitives.py measures the Python calls: windows of 256 back-to-back calls after a stream
 * synchronize (so the GPU's queue never fills and the host never waits on the GPU), the
 * synchronize outside the timed region, best window of 40; us per call. stof_run_views and
 * stof_run_bound of a plan at B1 H12 d64, L 128 and 512, a band mask (|i - j| < 32), the
 * automatic choice. Run 90 on, also the throughput of a loop: one event pair around 2048
 * back-to-back stof_run_bound calls, GPU us per call (best of 3). Run 91 on, also built as a
 * shared library (-shared -fPIC) whose host_loop_bound primitives.py calls in its process. Build: gcc -O2 host_loop.c -I kernels/capi -I/usr/local/cuda/include
 * -L BUILD/kernels -lstof_capi -L/usr/local/cuda/lib64 -lcudart */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "stof_capi.h"

enum { B = 1, H = 12, D = 64, WINDOW = 256, WINDOWS = 40 };

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The window measure over one bound call, for primitives.py (run 91 on, through ctypes): the C
 * loop inside the Python process, on the stream it is given, so that the difference to
 * stof.attention is the bridge alone (same process, context, stream and plan). */
double host_loop_bound(const stof_bound* bound, const void* q, const void* k, const void* v,
                       void* o, void* stream, int window, int windows) {
  char err[256];
  double best = 1e30;
  for (int w = 0; w < windows; ++w) {
    cudaStreamSynchronize((cudaStream_t)stream);
    double t0 = now_us();
    for (int i = 0; i < window; ++i)
      if (stof_run_bound(bound, q, k, v, o, stream, err, sizeof err)) return -1.0;
    double us = (now_us() - t0) / window;
    if (us < best) best = us;
  }
  cudaStreamSynchronize((cudaStream_t)stream);
  return best;
}

static int measure(int L) {
  unsigned char* mask = malloc((size_t)L * L);
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < L; ++j) mask[i * L + j] = abs(i - j) < 32;
  char err[1024];
  stof_plan* plan = NULL;
  if (stof_prepare(mask, B, H, L, D, STOF_KERNEL_AUTO, 0, 0, 0, 0, &plan, err, sizeof err)) {
    printf("prepare: %s\n", err);
    return 1;
  }
  free(mask);
  stof_choice(plan, NULL, NULL, NULL, NULL, NULL, err, sizeof err);
  printf("L%d choice: %.60s\n", L, err);
  void *q, *k, *v, *o;
  size_t bytes = (size_t)B * H * L * D * 2;
  cudaMalloc(&q, bytes), cudaMalloc(&k, bytes), cudaMalloc(&v, bytes), cudaMalloc(&o, bytes);
  cudaStream_t s;
  cudaStreamCreate(&s);
  stof_bound* bound = NULL;
  if (stof_bind_views(plan, B, H, NULL, NULL, NULL, 0.0f, &bound, err, sizeof err)) {
    printf("bind: %s\n", err);
    return 1;
  }
  static const char* names[2] = {"stof_run_views", "stof_run_bound"};
  for (int way = 0; way < 2; ++way) {
    double best = 1e30;
    for (int w = 0; w < WINDOWS; ++w) {
      cudaStreamSynchronize(s);
      double t0 = now_us();
      for (int i = 0; i < WINDOW; ++i) {
        int rc = way == 0 ? stof_run_views(plan, q, k, v, o, B, H, NULL, NULL, NULL, 0.0f, s,
                                           err, sizeof err)
                          : stof_run_bound(bound, q, k, v, o, s, err, sizeof err);
        if (rc) { printf("run: %s\n", err); return 1; }
      }
      double us = (now_us() - t0) / WINDOW;
      if (us < best) best = us;
    }
    printf("L%-4d %-16s %6.3f us per call (host)\n", L, names[way], best);
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  float best_ms = 1e30f;
  for (int r = 0; r < 3; ++r) {
    cudaStreamSynchronize(s);
    cudaEventRecord(a, s);
    for (int i = 0; i < 2048; ++i) stof_run_bound(bound, q, k, v, o, s, err, sizeof err);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best_ms) best_ms = ms;
  }
  printf("L%-4d %-16s %6.3f us per call (GPU, 2048 back to back)\n", L, "stof_run_bound",
         best_ms * 1e3 / 2048);
  cudaEventDestroy(a), cudaEventDestroy(b);
  cudaStreamSynchronize(s);
  stof_bound_release(bound);
  stof_release(plan);
  cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o);
  cudaStreamDestroy(s);
  return 0;
}

int main(void) {
  return measure(128) || measure(512);
}
