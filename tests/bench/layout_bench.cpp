// stof_layout_bench: times BlockLayout::Build on 16384 x 16384 masks at 64x64, 128x128 and
// 16x16 (median of 5 runs, std::chrono::steady_clock), printing ms per conversion, or JSON
// with --json. Process CPU time (std::clock) is printed too: on a shared 2-core machine wall
// time includes waiting for the CPU, CPU time does not (both include page faults). Masks: "bigbird" (band + global + random 64x64 blocks at ~10% fill, STOF's
// compound pattern) and "random" (each bit set with probability 1/8: every block is a part
// block, the worst case for bitmap extraction). Seeded, so runs are comparable.
// Run by hand (scripts/ or a developer); not a ctest test.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "engine/layout/block_layout.h"
#include "engine/mask/mask.h"

namespace {

using stof::engine::BlockLayout;
using stof::engine::Mask;

constexpr int64_t kLen = 16384;
constexpr int kRepeats = 5;
constexpr uint64_t kSeed = 20261121;

Mask BigBirdMask() {
  Mask m = std::move(Mask::Create(kLen, kLen, "bench")).Value();
  const int64_t width = 128;  // sqrt(L), as in STOF Table 2
  for (int64_t r = 0; r < kLen; ++r) m.SetRange(r, r - width / 2, r + width / 2 + 1);
  m.SetRect(0, width, 0, kLen);
  m.SetRect(0, kLen, 0, width);
  std::mt19937_64 rng(kSeed);
  std::bernoulli_distribution fill(0.10);
  for (int64_t br = 0; br < kLen; br += 64) {
    for (int64_t bc = 0; bc < kLen; bc += 64) {
      if (fill(rng)) m.SetRect(br, br + 64, bc, bc + 64);
    }
  }
  return m;
}

Mask RandomMask() {
  Mask m = std::move(Mask::Create(kLen, kLen, "bench")).Value();
  std::mt19937_64 rng(kSeed + 1);
  for (int64_t r = 0; r < kLen; ++r) {
    uint64_t* row = m.RowWords(r);
    for (int64_t w = 0; w < m.WordsPerRow(); ++w) row[w] = rng() & rng() & rng();
  }
  return m;
}

struct Result {
  std::string mask;
  int64_t block = 0;
  double median_ms = 0, min_ms = 0, median_cpu_ms = 0;
  int64_t full = 0, part = 0;
};

Result Time(const std::string& name, const Mask& mask, int64_t block) {
  std::vector<double> ms, cpu_ms;
  Result res{name, block};
  for (int i = 0; i < kRepeats; ++i) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    auto layout = BlockLayout::Build(mask, block, block);
    const auto t1 = std::chrono::steady_clock::now();
    const std::clock_t c1 = std::clock();
    cpu_ms.push_back(1000.0 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
    if (!layout.IsOk()) {
      std::fprintf(stderr, "stof_layout_bench: %s\n", layout.Message().c_str());
      return res;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const auto s = layout->Stats();
    res.full = s.full_blocks;
    res.part = s.part_blocks;
  }
  std::sort(ms.begin(), ms.end());
  res.median_ms = ms[ms.size() / 2];
  res.min_ms = ms.front();
  std::sort(cpu_ms.begin(), cpu_ms.end());
  res.median_cpu_ms = cpu_ms[cpu_ms.size() / 2];
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      std::fprintf(stderr, "usage: stof_layout_bench [--json]\n");
      return 2;
    }
  }
  const Mask bigbird = BigBirdMask();
  const Mask random = RandomMask();
  std::vector<Result> results;
  for (int64_t block : {64, 128, 16}) results.push_back(Time("bigbird", bigbird, block));
  for (int64_t block : {64, 128, 16}) results.push_back(Time("random", random, block));

  if (json) {
    std::printf("{\"bench\": \"layout_build\", \"L\": %lld, \"repeats\": %d, \"results\": [",
                static_cast<long long>(kLen), kRepeats);
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::printf("%s\n  {\"mask\": \"%s\", \"block\": [%lld, %lld], \"median_ms\": %.3f, "
                  "\"min_ms\": %.3f, \"median_cpu_ms\": %.3f, \"full_blocks\": %lld, \"part_blocks\": %lld}",
                  i ? "," : "", r.mask.c_str(), static_cast<long long>(r.block),
                  static_cast<long long>(r.block), r.median_ms, r.min_ms,
                  r.median_cpu_ms, static_cast<long long>(r.full), static_cast<long long>(r.part));
    }
    std::printf("\n]}\n");
    return 0;
  }
  std::printf("BlockLayout::Build, L = %lld, median of %d\n", static_cast<long long>(kLen),
              kRepeats);
  std::printf("bigbird density %.3f, random density %.3f\n", bigbird.Density(), random.Density());
  for (const Result& r : results) {
    std::printf("  %-8s %3lldx%-3lld %9.2f ms (min %.2f, cpu %.2f)  full %lld  part %lld\n",
                r.mask.c_str(), static_cast<long long>(r.block), static_cast<long long>(r.block),
                r.median_ms, r.min_ms, r.median_cpu_ms, static_cast<long long>(r.full),
                static_cast<long long>(r.part));
  }
  return 0;
}
