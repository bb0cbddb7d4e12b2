// stof_row_runs_bench: times masks that never hold L x L bits, single-threaded:
// RowRuns::FromSpec then BlockLayout::Build(runs, 128, 128) at L = 32768, 131072 and 262144,
// and for comparison the dense path (Generate, then BlockLayout::Build(mask, 128, 128)) at
// L = 32768, the longest it takes. Masks: causal, sliding_window w = 4096, document (lengths
// of 4096) and bigbird (the defaults: w = g = round(sqrt(L)), 64 x 64 random blocks at 10 %,
// seed 0). Each case runs in its own forked process so that its peak resident memory
// (getrusage ru_maxrss) is its own; the child's resident size before the work is printed too.
// Median of --repeats runs (3) of wall time (std::chrono::steady_clock) and process CPU time
// (std::clock: on a shared machine wall time includes waiting for a core). Text, or JSON with
// --json. Run by hand; figures in docs/masks.md, "Masks without L x L bits (row runs)".
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "engine/layout/block_layout.h"
#include "engine/mask/mask_spec.h"
#include "engine/mask/row_runs.h"

namespace {

using stof::engine::BlockLayout;
using stof::engine::MaskSpec;
using stof::engine::RowRuns;

constexpr int64_t kBlock = 128;

struct Case {
  const char* mask;
  bool dense;
  int64_t len;
};

// What a child sends back through its pipe (plain bytes: both ends are this binary).
struct Result {
  char mask[32] = {};
  int dense = 0;
  int64_t len = 0;
  int ok = 0;
  char error[160] = {};
  double form_ms = 0, layout_ms = 0, total_cpu_ms = 0;  // medians
  int64_t runs = 0, form_bytes = 0;  // runs (RowRuns) or mask bytes (dense)
  int64_t full = 0, part = 0, bitmap_bytes = 0;
  int64_t rss_before_kib = 0, peak_rss_kib = 0;
};

MaskSpec SpecOf(const std::string& mask, int64_t len) {
  MaskSpec s;
  s.pattern = mask;
  s.seq_len = len;
  if (mask == "sliding_window") s.width = 4096;
  if (mask == "document") s.doc_lengths.assign(static_cast<size_t>(len / 4096), 4096);
  return s;
}

int64_t MaxRssKib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A Result naming the case, nothing measured yet.
Result Named(const Case& c) {
  Result r;
  std::snprintf(r.mask, sizeof r.mask, "%s", c.mask);
  r.dense = c.dense ? 1 : 0;
  r.len = c.len;
  return r;
}

Result Fail(Result r, const std::string& message) {
  std::snprintf(r.error, sizeof r.error, "%s", message.c_str());
  return r;
}

// One case, in the child: `repeats` times form + layout, the medians, the peak memory.
Result RunCase(const Case& c, int repeats) {
  Result r = Named(c);
  r.rss_before_kib = MaxRssKib();
  const MaskSpec spec = SpecOf(c.mask, c.len);
  std::vector<double> form_ms, layout_ms, cpu_ms;
  for (int i = 0; i < repeats; ++i) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    auto t1 = t0;
    stof::engine::Expected<BlockLayout> layout = BlockLayout();
    if (c.dense) {
      auto mask = stof::engine::Generate(spec);
      if (!mask.IsOk()) return Fail(r, mask.Message());
      t1 = std::chrono::steady_clock::now();
      layout = BlockLayout::Build(*mask, kBlock, kBlock);
      r.form_bytes = static_cast<int64_t>(mask->Words().size() * sizeof(uint64_t));
    } else {
      auto runs = RowRuns::FromSpec(spec);
      if (!runs.IsOk()) return Fail(r, runs.Message());
      t1 = std::chrono::steady_clock::now();
      layout = BlockLayout::Build(*runs, kBlock, kBlock);
      r.runs = runs->RunCount();
      r.form_bytes = runs->MemoryBytes();
    }
    const auto t2 = std::chrono::steady_clock::now();
    const std::clock_t c1 = std::clock();
    if (!layout.IsOk()) return Fail(r, layout.Message());
    form_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    layout_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    cpu_ms.push_back(1000.0 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
    const auto s = layout->Stats();
    r.full = s.full_blocks;
    r.part = s.part_blocks;
    r.bitmap_bytes = s.bitmap_bytes;
  }
  r.form_ms = Median(form_ms);
  r.layout_ms = Median(layout_ms);
  r.total_cpu_ms = Median(cpu_ms);
  r.peak_rss_kib = MaxRssKib();
  r.ok = 1;
  return r;
}

// Forks, runs the case in the child, reads its Result back.
Result RunInChild(const Case& c, int repeats) {
  Result r = Named(c);
  int fds[2];
  if (pipe(fds) != 0) return Fail(r, "pipe failed");
  const pid_t pid = fork();
  if (pid < 0) return Fail(r, "fork failed");
  if (pid == 0) {
    close(fds[0]);
    const Result res = RunCase(c, repeats);
    const ssize_t n = write(fds[1], &res, sizeof res);
    _exit(n == static_cast<ssize_t>(sizeof res) ? 0 : 1);
  }
  close(fds[1]);
  Result got;
  const ssize_t n = read(fds[0], &got, sizeof got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != static_cast<ssize_t>(sizeof got)) return Fail(r, "the child died (out of memory?)");
  return got;
}

double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  int repeats = 3;
  std::string only_mask;  // --mask: one mask's cases only
  int64_t only_len = 0;   // --len: one length's cases only
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--mask") == 0 && i + 1 < argc) {
      only_mask = argv[++i];
    } else if (std::strcmp(argv[i], "--len") == 0 && i + 1 < argc) {
      only_len = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: stof_row_runs_bench [--json] [--repeats N] [--mask NAME] [--len L]\n");
      return 2;
    }
  }
  if (repeats < 1 || repeats > 100) {
    std::fprintf(stderr, "stof_row_runs_bench: --repeats: expected 1..100\n");
    return 2;
  }
  const char* masks[] = {"causal", "sliding_window", "document", "bigbird"};
  std::vector<Case> cases;
  for (const char* m : masks) cases.push_back({m, true, 32768});
  for (int64_t len : {32768, 131072, 262144}) {
    for (const char* m : masks) cases.push_back({m, false, len});
  }
  std::vector<Result> results;
  for (const Case& c : cases) {
    if ((!only_mask.empty() && only_mask != c.mask) || (only_len != 0 && only_len != c.len)) {
      continue;
    }
    results.push_back(RunInChild(c, repeats));
    const Result& r = results.back();
    if (!r.ok) std::fprintf(stderr, "stof_row_runs_bench: %s L=%lld %s: %s\n", r.mask,
                            static_cast<long long>(r.len), r.dense ? "dense" : "runs", r.error);
  }

  if (json) {
    std::printf("{\"bench\": \"row_runs\", \"block\": [%lld, %lld], \"repeats\": %d, "
                "\"results\": [",
                static_cast<long long>(kBlock), static_cast<long long>(kBlock), repeats);
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::printf("%s\n  {\"mask\": \"%s\", \"path\": \"%s\", \"L\": %lld, \"ok\": %s, "
                  "\"form_ms\": %.3f, \"layout_ms\": %.3f, \"total_cpu_ms\": %.3f, "
                  "\"runs\": %lld, \"form_bytes\": %lld, \"full_blocks\": %lld, "
                  "\"part_blocks\": %lld, \"bitmap_bytes\": %lld, \"rss_before_kib\": %lld, "
                  "\"peak_rss_kib\": %lld}",
                  i ? "," : "", r.mask, r.dense ? "dense" : "runs", static_cast<long long>(r.len),
                  r.ok ? "true" : "false", r.form_ms, r.layout_ms, r.total_cpu_ms,
                  static_cast<long long>(r.runs), static_cast<long long>(r.form_bytes),
                  static_cast<long long>(r.full), static_cast<long long>(r.part),
                  static_cast<long long>(r.bitmap_bytes), static_cast<long long>(r.rss_before_kib),
                  static_cast<long long>(r.peak_rss_kib));
    }
    std::printf("\n]}\n");
    return 0;
  }
  std::printf("mask build + BlockLayout at %lldx%lld, median of %d, one thread\n",
              static_cast<long long>(kBlock), static_cast<long long>(kBlock), repeats);
  std::printf("  %-15s %-5s %7s %10s %10s %10s %11s %10s %9s %8s %10s\n", "mask", "path", "L",
              "form ms", "layout ms", "cpu ms", "form MiB", "peak MiB", "full", "part",
              "bitmap MiB");
  for (const Result& r : results) {
    if (!r.ok) continue;
    std::printf("  %-15s %-5s %7lld %10.1f %10.1f %10.1f %11.1f %10.1f %9lld %8lld %10.1f\n",
                r.mask, r.dense ? "dense" : "runs", static_cast<long long>(r.len), r.form_ms,
                r.layout_ms, r.total_cpu_ms, Mib(r.form_bytes),
                static_cast<double>(r.peak_rss_kib) / 1024.0, static_cast<long long>(r.full),
                static_cast<long long>(r.part), Mib(r.bitmap_bytes));
  }
  return 0;
}
