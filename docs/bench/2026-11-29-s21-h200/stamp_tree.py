"""Adds per-CTA debug stamps to a source tree's Hopper attention kernel (device run 139 only,
never landed): %globaltimer at each CTA's start and end, clock64 at its phases, 11 values per
CTA of the 40th split launch, written to $STOF_STAMPS by the host. Works on the kernel files of
HEAD (the merge by warps) and of the compact merge alike (the anchors are in both).
Slots: 0 start (globaltimer), 1 end (globaltimer), 2 start, 3 producer past its wait,
4 Q full (consumer), 5 first K full, 6 blocks done, 7 merge done, 8 end, 9 stored (1/0),
10 the last chunk's merge starts (its arrival seen).
Usage: python3 stamp_tree.py SOURCE_ROOT"""
import sys

root = sys.argv[1]
kdir = root + "/kernels/attention_hopper/"


def edit(name, pairs):
    path = kdir + name
    s = open(path).read()
    for old, new in pairs:
        if s.count(old) != 1:
            sys.exit(f"stamp_tree: anchor found {s.count(old)} times in {name}: {old[:60]!r}")
        s = s.replace(old, new)
    open(path, "w").write(s)


helpers = '''
static __device__ unsigned long long g_stof_stamps[1024 * 11];
__device__ __forceinline__ unsigned long long StofGlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void StofStampAny(int slot, unsigned long long v) {
  if (blockIdx.x < 1024) g_stof_stamps[blockIdx.x * 11 + slot] = v;
}
template <int kSchedule>
__device__ __forceinline__ void StofStamp(int slot, unsigned long long v) {
  if ((kSchedule & 4) != 0) StofStampAny(slot, v);
}
'''
edit("hopper_split.cuh", [
    ("namespace stof::kernels::detail {\n", "namespace stof::kernels::detail {\n" + helpers),
    ("  if (*flag == 0) return false;\n",
     "  if (*flag == 0) return false;\n  if (thread == 0) StofStampAny(10, clock64());\n"),
])
edit("hopper_attention_kernel.cuh", [
    ("#include <cstdint>\n", "#include <cstdint>\n#include <cstdio>\n"),
    ("    hopper::BarrierWait(sm.KFull(cur.stage), cur.phase);\n    GemmQK<T>(s, q_addr, hopper::SmemAddr(sm.K(cur.stage)));\n    steps.prefetch(i);\n",
     "    hopper::BarrierWait(sm.KFull(cur.stage), cur.phase);\n    if (threadIdx.x == 0 && i == 0) StofStampAny(5, clock64());\n"
     "    GemmQK<T>(s, q_addr, hopper::SmemAddr(sm.K(cur.stage)));\n    steps.prefetch(i);\n"),
    ("  bool store = true;\n",
     "  bool store = true;\n  if (threadIdx.x == 0) StofStamp<kSchedule>(6, clock64());\n"),
    ("  if (store) {\n    float inv[2];\n",
     "  if (threadIdx.x == 0) { StofStamp<kSchedule>(7, clock64()); StofStamp<kSchedule>(9, store ? 1 : 0); }\n"
     "  if (store) {\n    float inv[2];\n"),
    ("  release(sm.QEmpty(slot));\n}\n",
     "  release(sm.QEmpty(slot));\n  if (threadIdx.x == 0) { StofStamp<kSchedule>(8, clock64()); "
     "StofStamp<kSchedule>(1, StofGlobalTimer()); }\n}\n"),
    ("  HopperWorkItem first{};\n",
     "  if (threadIdx.x == 0) { StofStamp<kSchedule>(0, StofGlobalTimer()); StofStamp<kSchedule>(2, clock64()); }\n"
     "  HopperWorkItem first{};\n"),
    ("    hopper::WaitPriorGrids();\n    for (HopperWorkItem w = first;",
     "    hopper::WaitPriorGrids();\n    StofStamp<kSchedule>(3, clock64());\n    for (HopperWorkItem w = first;"),
    ("      hopper::BarrierWait(sm.QFull(at.QSlot()), at.QParity());\n",
     "      hopper::BarrierWait(sm.QFull(at.QSlot()), at.QParity());\n"
     "      if (threadIdx.x == 0) StofStamp<kSchedule>(4, clock64());\n"),
    ("  STOF_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, maps.q, maps.k, maps.v, maps.o, launch));\n",
     "  STOF_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, maps.q, maps.k, maps.v, maps.o, launch));\n"
     '''  static int split_launches = 0;
  const char* dump = std::getenv("STOF_STAMPS");
  if (split && dump != nullptr && ++split_launches == 40) {
    STOF_CUDA_TRY(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    static unsigned long long host[1024 * 11];
    STOF_CUDA_TRY(cudaMemcpyFromSymbol(host, g_stof_stamps, sizeof(host)));
    if (FILE* f = std::fopen(dump, "w")) {
      std::fprintf(f, "grid %lld\\n", static_cast<long long>(grid));
      for (int64_t c = 0; c < grid && c < 1024; ++c) {
        for (int j = 0; j < 11; ++j) std::fprintf(f, "%llu ", host[c * 11 + j]);
        std::fprintf(f, "\\n");
      }
      std::fclose(f);
    }
  }
'''),
])
print("stamped", root)
