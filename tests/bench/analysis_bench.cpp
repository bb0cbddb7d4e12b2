// stof_analysis_bench: the studio's mask analysis, single-threaded, median of 5 runs of wall
// time each. 1) its block-size table (BuildBlockSizeTable, 16 block sizes) of 16384 x 16384
// generated masks against its former way (one BlockLayout::Build per size, the statistics
// taken from each layout); 2) AnalyzeRowRuns (64 x 64 layout, 128 x 128 statistics, the table)
// of masks held as runs at L = 131072, the runs built from the spec included. Masks: causal,
// sliding_window, longformer and bigbird at their default parameters, and documents of 4096
// (part 2). Run by hand; figures in docs/masks.md, "Masks without L x L bits (row runs)".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "engine/analysis/layout_analysis.h"
#include "engine/device/device_spec.h"
#include "engine/layout/block_layout.h"
#include "engine/layout/block_size_table.h"
#include "engine/mask/mask_pattern.h"
#include "engine/mask/mask_spec.h"

namespace {

using stof::engine::BlockLayout;

template <class F>
double MedianMs(F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

}  // namespace

int main() {
  constexpr int64_t kLen = 16384;
  std::printf("%-15s %12s %12s %8s\n", "mask", "per layout", "table", "ratio");
  for (const char* pattern : {"causal", "sliding_window", "longformer", "bigbird"}) {
    stof::engine::MaskSpec spec;
    spec.pattern = pattern;
    spec.seq_len = kLen;
    auto mask = stof::engine::Generate(spec);
    if (!mask.IsOk()) {
      std::fprintf(stderr, "%s: %s\n", pattern, mask.Message().c_str());
      return 1;
    }
    stof::engine::Workload w;
    w.seq_len = kLen;
    const auto& sizes = stof::engine::DefaultTableBlockSizes();
    int64_t sink = 0;
    const double per_layout = MedianMs([&] {
      for (const auto& [m, n] : sizes) sink += BlockLayout::Build(*mask, m, n)->Stats().nnz;
    });
    const double table = MedianMs([&] {
      sink += stof::engine::BuildBlockSizeTable(*mask, w, sizes)->front().stats.nnz;
    });
    std::printf("%-15s %9.1f ms %9.1f ms %7.2fx%s\n", pattern, per_layout, table,
                per_layout / table, sink == 0 ? " (empty)" : "");
  }
  constexpr int64_t kLong = 131072;
  std::printf("\nAnalyzeRowRuns at L = %lld (runs from the spec, then the analysis)\n",
              static_cast<long long>(kLong));
  for (const char* pattern : {"causal", "sliding_window", "document", "longformer", "bigbird"}) {
    stof::engine::MaskSpec spec;
    spec.pattern = pattern;
    spec.seq_len = kLong;
    if (spec.pattern == "document") spec.doc_lengths.assign(kLong / 4096, 4096);
    stof::engine::AnalysisRequest request;
    request.workload.seq_len = kLong;
    request.device = *stof::engine::FindBuiltinDevice("h100");
    int64_t runs = 0;
    bool ok = true;
    const double ms = MedianMs([&] {
      auto r = stof::engine::RowRuns::FromSpec(spec);
      ok = ok && r.IsOk() && stof::engine::AnalyzeRowRuns(*r, request).IsOk();
      runs = r.IsOk() ? r->RunCount() : 0;
    });
    std::printf("%-15s %9.1f ms  (%lld runs)%s\n", pattern, ms, static_cast<long long>(runs),
                ok ? "" : " FAILED");
  }
  return 0;
}
