// Tests of the tuner's persistent cache (engine/tune/tune_cache.h): the key format, the
// round trip of entries (failed candidates and unknown bytes included), later lines winning,
// tolerant reading of corrupt files with exact skip counts, errors for unusable paths, bad
// entries refused, concurrent writers (4 forked processes, threads), Reload after appends,
// truncation and replacement, compaction to the size bound, and the default location.
#include "engine/tune/tune_cache.h"
#include "test_dir.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using stof::engine::CachedCost;
using stof::engine::DefaultTuneCachePath;
using stof::engine::TuneCache;
using stof::engine::TuneCacheKey;
using stof::engine::TuneCachePathFrom;
namespace fs = std::filesystem;

namespace {

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::string Read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int CountLines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

CachedCost Cost(double us, double bytes = -1, int64_t repeats = 100, std::string method = "cuda graph + events",
                std::string error = "") {
  return CachedCost{us, bytes, repeats, std::move(method), std::move(error)};
}

// A valid line as the cache writes it, for hand-made files.
std::string Line(const std::string& key, double us) {
  std::ostringstream s;
  s << R"({"v":1,"key":")" << key << R"(","us":)" << us
    << R"(,"bytes":-1,"repeats":10,"method":"m","error":""})" << "\n";
  return s.str();
}

TuneCache OpenOrDie(const std::string& path, int64_t max_bytes = stof::engine::kMaxTuneCacheBytes) {
  auto c = TuneCache::Open(path, max_bytes);
  EXPECT_TRUE(c.IsOk()) << c.Message();
  if (!c.IsOk()) return TuneCache::InMemory();
  return std::move(*c);
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST(TuneCache, KeyIsLengthPrefixedAndUnambiguous) {
  EXPECT_EQ(TuneCacheKey("H100", "b1", "s0", "t", ""), "4:H100|2:b1|2:s0|1:t|0:");
  EXPECT_NE(TuneCacheKey("a|b", "c", "", "", ""), TuneCacheKey("a", "b|c", "", "", ""));
  EXPECT_NE(TuneCacheKey("1:a", "", "", "", ""), TuneCacheKey("", "1:a", "", "", ""));
  EXPECT_NE(TuneCacheKey("a", "", "", "", ""), TuneCacheKey("", "a", "", "", ""));
  EXPECT_NE(TuneCacheKey("x", "y", "z", "w", "v"), TuneCacheKey("x", "y", "z", "wv", ""));
  // A part that itself looks like a following "len:" field.
  EXPECT_NE(TuneCacheKey("a|1:b", "", "", "", ""), TuneCacheKey("a", "b", "", "", ""));
  EXPECT_EQ(TuneCacheKey("dev", "sh", "seg", "tm", "p=1"), TuneCacheKey("dev", "sh", "seg", "tm", "p=1"));
}

TEST(TuneCache, RoundTripIncludingErrorsAndUnknownBytes) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "a" / "b" / "tune-cache.jsonl").string();  // mkdir -p
  const std::vector<std::pair<std::string, CachedCost>> entries = {
      {TuneCacheKey("H100", "1x128x12x64", "0011", "gemm_norm", "bm=64,bn=128"), Cost(12.375, 1048576, 200)},
      {TuneCacheKey("H100", "1x128x12x64", "0011", "gemm_norm", "bm=128,bn=128"),
       Cost(0, -1, 0, "", "gemm_norm: n: expected a multiple of 64 up to 1024, got 1000")},
      {"quotes \" backslash \\ newline \n tab \t \xc3\xa9 end", Cost(1.0 / 3.0, 0, 7, "events")},
      {"tiny", Cost(5e-300, 1e300, std::numeric_limits<int64_t>::max(), "m")},
  };
  {
    auto c = TuneCache::Open(path);
    ASSERT_TRUE(c.IsOk()) << c.Message();
    EXPECT_EQ(c->Path(), path);
    EXPECT_FALSE(c->IsInMemory());
    for (const auto& [k, v] : entries) ASSERT_TRUE(c->Put(k, v).IsOk());
    for (const auto& [k, v] : entries) EXPECT_EQ(c->Find(k), v) << k;
    const auto st = c->Stats();
    EXPECT_EQ(st.entries, 4);
    EXPECT_EQ(st.appended_lines, 4);
    EXPECT_EQ(st.loaded_lines, 4);  // own appends onto a file read to its end count as loaded
    EXPECT_EQ(st.file_bytes, static_cast<int64_t>(fs::file_size(path)));
  }
  const std::string text = Read(path);
  EXPECT_EQ(CountLines(text), 4);  // one line per entry, the escaped newline stays inside
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.rfind("{\"v\":1,\"key\":", 0), 0u) << text;

  auto c = TuneCache::Open(path);
  ASSERT_TRUE(c.IsOk()) << c.Message();
  for (const auto& [k, v] : entries) {
    const auto got = c->Find(k);
    ASSERT_TRUE(got.has_value()) << k;
    EXPECT_EQ(*got, v) << k;  // exact: doubles round-trip through the JSON text
  }
  EXPECT_EQ(c->Find("absent"), std::nullopt);
  const auto st = c->Stats();
  EXPECT_EQ(st.entries, 4);
  EXPECT_EQ(st.loaded_lines, 4);
  EXPECT_EQ(st.skipped_lines, 0);
  EXPECT_EQ(st.appended_lines, 0);
  EXPECT_EQ(st.file_bytes, static_cast<int64_t>(text.size()));
  EXPECT_FALSE(st.compacted);
  EXPECT_EQ(st.warning, "");
}

TEST(TuneCache, LaterEntryWins) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  {
    TuneCache c = OpenOrDie(path);
    ASSERT_TRUE(c.Put("k", Cost(10)).IsOk());
    ASSERT_TRUE(c.Put("other", Cost(1)).IsOk());
    ASSERT_TRUE(c.Put("k", Cost(20, 5)).IsOk());
    EXPECT_EQ(c.Find("k"), Cost(20, 5));
    EXPECT_EQ(c.Stats().entries, 2);
  }
  TuneCache c = OpenOrDie(path);
  EXPECT_EQ(c.Find("k"), Cost(20, 5));
  EXPECT_EQ(c.Find("other"), Cost(1));
  EXPECT_EQ(c.Stats().entries, 2);
  EXPECT_EQ(c.Stats().loaded_lines, 3);

  Write(path, Line("x", 3) + Line("x", 1) + Line("x", 2));  // hand-made: the last line wins
  TuneCache h = OpenOrDie(path);
  ASSERT_TRUE(h.Find("x").has_value());
  EXPECT_EQ(h.Find("x")->us, 2);
}

TEST(TuneCache, CorruptFileKeepsValidEntriesAndCountsSkippedLines) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  const std::string tail = R"({"v":1,"key":"b","us":5,"bytes":-1,"repe)";  // torn: no '\n'
  const std::vector<std::string> bad = {
      "hello, not json",
      "{",
      "[1,2,3]",
      "42",
      R"({"v":1,"key":"m","us":1,"bytes":-1,"repeats":1,"method":"m"})",               // no error
      R"({"v":1,"us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",               // no key
      R"({"v":1,"key":"t","us":"12","bytes":-1,"repeats":1,"method":"m","error":""})",  // us string
      R"({"v":1,"key":"t","us":NaN,"bytes":-1,"repeats":1,"method":"m","error":""})",   // NaN
      R"({"v":1,"key":"t","us":null,"bytes":-1,"repeats":1,"method":"m","error":""})",
      R"({"v":1,"key":"t","us":1e999,"bytes":-1,"repeats":1,"method":"m","error":""})",  // inf
      R"({"v":1,"key":"t","us":-1,"bytes":-1,"repeats":1,"method":"m","error":""})",
      R"({"v":1,"key":"t","us":1,"bytes":-2,"repeats":1,"method":"m","error":""})",
      R"({"v":1,"key":"t","us":1,"bytes":-0.5,"repeats":1,"method":"m","error":""})",  // only -1
      R"({"v":1,"key":"t","us":1,"bytes":-1,"repeats":1.5,"method":"m","error":""})",
      R"({"v":1,"key":"t","us":1,"bytes":-1,"repeats":-3,"method":"m","error":""})",
      R"({"v":1,"key":"t","us":1,"bytes":-1,"repeats":1,"method":7,"error":""})",
      R"({"v":1,"key":"","us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",     // empty key
      R"({"v":1,"key":5,"us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",
      R"({"v":1,"key":"t","us":1,"bytes":-1,"repeats":1,"method":"m","error":"","x":1})",  // unknown
      R"({"v":2,"key":"t","us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",    // future v
      R"({"v":"1","key":"t","us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",
      R"({"key":"t","us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",          // no v
      R"({"v":1,"key":"t","us":1,"bytes":-1,"repeats":1,"method":"m","error":""} trailing)",
      // Nested 30 000 deep (fits a line): refused by the parser's depth limit, not a crash.
      R"({"v":1,"key":)" + std::string(30000, '[') + std::string(30000, ']') +
          R"(,"us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",
      // Valid JSON, but longer than a cache line may be.
      R"({"v":1,"key":")" + std::string(70 * 1024, 'k') +
          R"(","us":1,"bytes":-1,"repeats":1,"method":"m","error":""})",
  };
  std::string text = Line("a", 1.5);
  for (const std::string& b : bad) text += b + "\n";
  text += "\n   \n";  // blank lines are not entries and not corruption
  text += Line("c", 2.5) + tail;
  Write(path, text);

  {
    auto c = TuneCache::Open(path);
    ASSERT_TRUE(c.IsOk()) << c.Message();
    const auto st = c->Stats();
    EXPECT_EQ(st.entries, 2);
    EXPECT_EQ(st.loaded_lines, 2);
    EXPECT_EQ(st.skipped_lines, static_cast<int64_t>(bad.size()) + 1);  // + the torn tail
    EXPECT_EQ(st.file_bytes, static_cast<int64_t>(text.size()));
    ASSERT_TRUE(c->Find("a").has_value());
    EXPECT_EQ(c->Find("a")->us, 1.5);
    ASSERT_TRUE(c->Find("c").has_value());
    EXPECT_EQ(c->Find("c")->us, 2.5);
    EXPECT_FALSE(c->Find("b").has_value());
    EXPECT_FALSE(c->Find("t").has_value());
    EXPECT_FALSE(c->Find("m").has_value());

    // A Put after a torn tail ends the fragment first, so the new entry is not glued to it.
    ASSERT_TRUE(c->Put("d", Cost(4)).IsOk());
    EXPECT_EQ(c->Stats().loaded_lines, 3);
    EXPECT_EQ(c->Stats().file_bytes, static_cast<int64_t>(fs::file_size(path)));
    ASSERT_TRUE(c->Reload().IsOk());  // nothing new: counts unchanged
    EXPECT_EQ(c->Stats().loaded_lines, 3);
    EXPECT_EQ(c->Stats().skipped_lines, static_cast<int64_t>(bad.size()) + 1);
  }
  EXPECT_EQ(Read(path).substr(text.size(), 2), "\n{");
  auto again = TuneCache::Open(path);
  ASSERT_TRUE(again.IsOk()) << again.Message();
  EXPECT_EQ(again->Find("d"), Cost(4));
  EXPECT_EQ(again->Stats().entries, 3);
  EXPECT_EQ(again->Stats().skipped_lines, static_cast<int64_t>(bad.size()) + 1);  // fragment: once
}

TEST(TuneCache, EmptyAndMissingFiles) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  Write(path, "");
  {
    TuneCache c = OpenOrDie(path);
    const auto st = c.Stats();
    EXPECT_EQ(st.entries, 0);
    EXPECT_EQ(st.loaded_lines, 0);
    EXPECT_EQ(st.skipped_lines, 0);
    EXPECT_EQ(st.file_bytes, 0);
  }
  const std::string missing = (dir / "new" / "tune-cache.jsonl").string();
  {
    TuneCache c = OpenOrDie(missing);
    EXPECT_EQ(c.Stats().entries, 0);
  }
  EXPECT_TRUE(fs::is_regular_file(missing));  // created at Open, before any Put
  EXPECT_EQ(fs::file_size(missing), 0u);

  auto none = TuneCache::Open("");
  ASSERT_FALSE(none.IsOk());
  EXPECT_TRUE(Contains(none.Message(), "empty path")) << none.Message();
}

TEST(TuneCache, DirectoryInPlaceOfFileIsAnError) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  fs::create_directories(path);
  auto c = TuneCache::Open(path);
  ASSERT_FALSE(c.IsOk());
  EXPECT_EQ(c.Message(), path + ": is a directory, not a regular file");
}

TEST(TuneCache, UnwritableLocationIsAnError) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  // A regular file where a directory should be: refused even for root.
  Write(dir / "plain", "x");
  const std::string under_file = (dir / "plain" / "sub" / "tune-cache.jsonl").string();
  auto a = TuneCache::Open(under_file);
  ASSERT_FALSE(a.IsOk());
  EXPECT_TRUE(Contains(a.Message(), under_file + ": cannot create directory")) << a.Message();
  const std::string direct = (dir / "plain" / "tune-cache.jsonl").string();
  auto b = TuneCache::Open(direct);
  ASSERT_FALSE(b.IsOk());
  EXPECT_TRUE(Contains(b.Message(), direct + ": ")) << b.Message();
  // /proc refuses new entries, also to root.
  auto p = TuneCache::Open("/proc/stof-tune-cache-test/tune-cache.jsonl");
  ASSERT_FALSE(p.IsOk());
  EXPECT_TRUE(Contains(p.Message(), "/proc/stof-tune-cache-test/tune-cache.jsonl: ")) << p.Message();

  if (::geteuid() == 0) {
    std::cout << "[ note     ] running as root: permission bits are not enforced, the chmod "
                 "cases are not checked (the file-as-directory and /proc cases above were)\n";
  } else {
    const fs::path ro = dir / "ro";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    const std::string in_ro = (ro / "tune-cache.jsonl").string();
    auto r = TuneCache::Open(in_ro);
    ASSERT_FALSE(r.IsOk());
    EXPECT_EQ(r.Message(), in_ro + ": cannot open: Permission denied");
    fs::permissions(ro, fs::perms::owner_all);
    const fs::path ro_file = dir / "ro_file.jsonl";
    Write(ro_file, Line("a", 1));
    fs::permissions(ro_file, fs::perms::owner_read);
    auto f = TuneCache::Open(ro_file.string());
    ASSERT_FALSE(f.IsOk());
    EXPECT_EQ(f.Message(), ro_file.string() + ": cannot open: Permission denied");
  }
}

TEST(TuneCache, PutRefusesBadEntriesAndWritesNothing) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  TuneCache c = OpenOrDie(path);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto expect_refused = [&](const std::string& key, const CachedCost& v, const std::string& want) {
    const auto s = c.Put(key, v);
    ASSERT_FALSE(s.IsOk()) << key;
    EXPECT_TRUE(Contains(s.Message(), path + ": put: " + want)) << s.Message();
    EXPECT_FALSE(c.Find(key).has_value()) << key;
  };
  expect_refused("", Cost(1), "key: expected a non-empty string");
  expect_refused("k1", Cost(nan), "us: expected a finite number >= 0");
  expect_refused("k2", Cost(inf), "us: expected a finite number >= 0");
  expect_refused("k3", Cost(-0.5), "us: expected a finite number >= 0");
  expect_refused("k4", Cost(1, -2), "bytes: expected -1 (unknown) or a finite number >= 0");
  expect_refused("k5", Cost(1, nan), "bytes: expected -1");
  expect_refused("k6", Cost(1, -1, -1), "repeats: expected >= 0");
  expect_refused("bad \xff utf8", Cost(1), "key: not valid UTF-8");
  expect_refused("k7", Cost(1, -1, 1, "m\xc3"), "method: not valid UTF-8");
  expect_refused(std::string(70 * 1024, 'k'), Cost(1), "line of ");
  EXPECT_EQ(fs::file_size(path), 0u);
  EXPECT_EQ(c.Stats().entries, 0);
  EXPECT_EQ(c.Stats().appended_lines, 0);

  TuneCache mem = TuneCache::InMemory();
  const auto s = mem.Put("k", Cost(nan));
  ASSERT_FALSE(s.IsOk());
  EXPECT_TRUE(Contains(s.Message(), "tune cache (in memory): put: us:")) << s.Message();
}

TEST(TuneCache, InMemoryCacheHasNoFile) {
  TuneCache c = TuneCache::InMemory();
  EXPECT_TRUE(c.IsInMemory());
  EXPECT_EQ(c.Path(), "");
  ASSERT_TRUE(c.Put("a", Cost(1, 2, 3, "m", "e")).IsOk());
  ASSERT_TRUE(c.Put("a", Cost(4)).IsOk());
  EXPECT_EQ(c.Find("a"), Cost(4));
  EXPECT_TRUE(c.Reload().IsOk());
  const auto st = c.Stats();
  EXPECT_EQ(st.entries, 1);
  EXPECT_EQ(st.appended_lines, 0);
  EXPECT_EQ(st.loaded_lines, 0);
  EXPECT_EQ(st.file_bytes, 0);
  TuneCache moved = std::move(c);  // movable (the tuner hands it to its worker)
  EXPECT_EQ(moved.Find("a"), Cost(4));
}

// The cross-process guarantee: 4 processes append at once (released together by a pipe), also
// reloading while others write; afterwards every line is whole and every entry is there.
TEST(TuneCache, ConcurrentProcessesLoseNothing) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  { TuneCache c = OpenOrDie(path); }
  constexpr int kChildren = 4;
  constexpr int kPerChild = 500;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> pids;
  for (int child = 0; child < kChildren; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Child: no gtest macros (their failures would not reach the parent); exit codes speak.
      ::close(gate[1]);
      char byte;
      while (::read(gate[0], &byte, 1) > 0) {}  // returns 0 once the parent closes its end
      auto c = TuneCache::Open(path);
      if (!c.IsOk()) ::_exit(10);
      for (int i = 0; i < kPerChild; ++i) {
        const std::string key = TuneCacheKey("dev", std::string("p").append(std::to_string(child)), "seg", "t", std::to_string(i));
        const CachedCost v = Cost(child * 1000 + i, i % 2 ? -1.0 : double(i) * 64, i, "m", i % 7 ? "" : "failed");
        if (!c->Put(key, v).IsOk()) ::_exit(11);
        if (i % 50 == 49 && !c->Reload().IsOk()) ::_exit(12);
      }
      if (!c->Reload().IsOk()) ::_exit(13);
      if (c->Stats().skipped_lines != 0) ::_exit(14);
      if (c->Stats().entries < kPerChild) ::_exit(15);
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // go
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child killed";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed (10 open, 11 put, 12/13 reload, 14 skipped, 15 entries)";
  }
  const std::string text = Read(path);
  EXPECT_EQ(CountLines(text), kChildren * kPerChild);
  TuneCache c = OpenOrDie(path);
  const auto st = c.Stats();
  EXPECT_EQ(st.entries, kChildren * kPerChild);
  EXPECT_EQ(st.loaded_lines, kChildren * kPerChild);
  EXPECT_EQ(st.skipped_lines, 0);
  for (int child = 0; child < kChildren; ++child) {
    for (int i = 0; i < kPerChild; ++i) {
      const auto got = c.Find(TuneCacheKey("dev", "p" + std::to_string(child), "seg", "t", std::to_string(i)));
      ASSERT_TRUE(got.has_value()) << child << " " << i;
      ASSERT_EQ(got->us, child * 1000 + i);
      ASSERT_EQ(got->error, i % 7 ? "" : "failed");
    }
  }
}

// Threads: 4 with an instance each (separate descriptors lock each other like processes) and 2
// sharing one instance, while another thread reads Stats() and Find() the way the GUI does.
TEST(TuneCache, ConcurrentThreadsLoseNothing) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  TuneCache shared = OpenOrDie(path);
  constexpr int kPerThread = 500;
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto c = TuneCache::Open(path);
      if (!c.IsOk()) {
        ++failures;
        return;
      }
      for (int i = 0; i < kPerThread; ++i)
        if (!c->Put("own" + std::to_string(t) + "/" + std::to_string(i), Cost(i)).IsOk()) ++failures;
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i)
        if (!shared.Put("shared" + std::to_string(t) + "/" + std::to_string(i), Cost(i)).IsOk()) ++failures;
    });
  }
  std::thread gui([&] {
    int64_t last = 0;
    while (!done) {
      const auto st = shared.Stats();
      if (st.entries < last) ++failures;  // entries only grow
      last = st.entries;
      (void)shared.Find("shared0/0");
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  gui.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(shared.Stats().entries, 2 * kPerThread);
  EXPECT_EQ(shared.Stats().appended_lines, 2 * kPerThread);
  ASSERT_TRUE(shared.Reload().IsOk());
  EXPECT_EQ(shared.Stats().entries, 6 * kPerThread);
  EXPECT_EQ(shared.Stats().loaded_lines, 6 * kPerThread);
  EXPECT_EQ(shared.Stats().file_bytes, static_cast<int64_t>(fs::file_size(path)));

  TuneCache c = OpenOrDie(path);
  EXPECT_EQ(c.Stats().entries, 6 * kPerThread);
  EXPECT_EQ(c.Stats().skipped_lines, 0);
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < kPerThread; ++i)
      ASSERT_EQ(c.Find("own" + std::to_string(t) + "/" + std::to_string(i)), Cost(i));
}

TEST(TuneCache, ReloadSeesAppendsTruncationAndReplacement) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  TuneCache a = OpenOrDie(path);
  TuneCache b = OpenOrDie(path);
  ASSERT_TRUE(b.Put("from_b", Cost(7)).IsOk());
  EXPECT_FALSE(a.Find("from_b").has_value());
  ASSERT_TRUE(a.Reload().IsOk());
  EXPECT_EQ(a.Find("from_b"), Cost(7));
  EXPECT_EQ(a.Stats().loaded_lines, 1);

  ASSERT_TRUE(a.Put("from_a", Cost(8)).IsOk());
  ASSERT_TRUE(b.Put("from_b", Cost(9)).IsOk());  // b's later line wins over b's earlier one
  ASSERT_TRUE(a.Reload().IsOk());
  EXPECT_EQ(a.Find("from_b"), Cost(9));
  ASSERT_TRUE(b.Reload().IsOk());  // b reads a's line and its own second one back
  EXPECT_EQ(b.Find("from_a"), Cost(8));
  EXPECT_EQ(b.Find("from_b"), Cost(9));
  EXPECT_EQ(a.Stats().loaded_lines, 3);
  EXPECT_EQ(b.Stats().loaded_lines, 3);
  ASSERT_TRUE(a.Reload().IsOk());  // nothing new: nothing counted twice
  EXPECT_EQ(a.Stats().loaded_lines, 3);

  // Truncated in place (same inode, shorter): read again from the start.
  Write(path, Line("after_truncate", 1));
  ASSERT_TRUE(a.Reload().IsOk());
  ASSERT_TRUE(a.Find("after_truncate").has_value());
  EXPECT_EQ(a.Stats().loaded_lines, 1);
  EXPECT_EQ(a.Find("from_a"), Cost(8));  // what was in memory stays

  // Rewritten in place to a longer text (the size alone would not tell).
  Write(path, Line("rewritten", 2) + Line("rewritten2", 3) + Line("rewritten3", 4));
  ASSERT_TRUE(a.Reload().IsOk());
  EXPECT_TRUE(a.Find("rewritten").has_value());
  EXPECT_TRUE(a.Find("rewritten3").has_value());
  EXPECT_EQ(a.Stats().loaded_lines, 3);

  // Replaced by rename (what another process's compaction does), with more bytes than before.
  const fs::path other = dir / "other.jsonl";
  Write(other, Line("replaced", 5) + Line("replaced2", 6) + Line("replaced3", 7) + Line("replaced4", 8));
  fs::rename(other, path);
  ASSERT_TRUE(a.Reload().IsOk());
  EXPECT_TRUE(a.Find("replaced").has_value());
  EXPECT_TRUE(a.Find("replaced4").has_value());
  EXPECT_EQ(a.Stats().loaded_lines, 4);
  EXPECT_EQ(a.Stats().file_bytes, static_cast<int64_t>(fs::file_size(path)));

  // Deleted: the next Put creates the file again.
  fs::remove(path);
  ASSERT_TRUE(b.Put("after_delete", Cost(11)).IsOk());
  TuneCache c = OpenOrDie(path);
  EXPECT_EQ(c.Stats().entries, 1);
  EXPECT_EQ(c.Find("after_delete"), Cost(11));
}

TEST(TuneCache, CompactionKeepsLatestPerKeyAndShrinksTheFile) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  constexpr int64_t kLimit = 4096;
  {
    TuneCache c = OpenOrDie(path);
    for (int version = 0; version < 20; ++version)
      for (int k = 0; k < 10; ++k) ASSERT_TRUE(c.Put("key" + std::to_string(k), Cost(version * 100 + k)).IsOk());
  }
  std::ofstream(path, std::ios::app) << "garbage line\n";
  const auto before = static_cast<int64_t>(fs::file_size(path));
  ASSERT_GT(before, kLimit);
  {
    TuneCache c = OpenOrDie(path, kLimit);
    const auto st = c.Stats();
    EXPECT_TRUE(st.compacted);
    EXPECT_EQ(st.warning, "");
    EXPECT_EQ(st.dropped_entries, 0);
    EXPECT_EQ(st.entries, 10);
    EXPECT_EQ(st.loaded_lines, 10);
    EXPECT_EQ(st.skipped_lines, 1);  // seen by this Open; the rewrite leaves it out
    const auto after = static_cast<int64_t>(fs::file_size(path));
    EXPECT_LT(after, before);
    EXPECT_LE(after, kLimit / 4 * 3);
    EXPECT_EQ(st.file_bytes, after);
    for (int k = 0; k < 10; ++k) EXPECT_EQ(c.Find("key" + std::to_string(k)), Cost(1900 + k));
    ASSERT_TRUE(c.Put("new", Cost(1)).IsOk());  // appends to the new file
    EXPECT_EQ(c.Stats().loaded_lines, 11);
  }
  EXPECT_EQ(CountLines(Read(path)), 11);
  int files = 0;  // no temporary left behind
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  TuneCache c = OpenOrDie(path, kLimit);
  EXPECT_FALSE(c.Stats().compacted);
  EXPECT_EQ(c.Stats().entries, 11);
  EXPECT_EQ(c.Stats().skipped_lines, 0);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(c.Find("key" + std::to_string(k)), Cost(1900 + k));
}

TEST(TuneCache, CompactionDropsTheOldestWhenLatestEntriesAreStillTooLarge) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  constexpr int64_t kLimit = 4096;
  constexpr int kKeys = 100;
  {
    TuneCache c = OpenOrDie(path);
    for (int k = 0; k < kKeys; ++k) ASSERT_TRUE(c.Put("key" + std::to_string(k), Cost(k)).IsOk());
    ASSERT_TRUE(c.Put("key0", Cost(1000)).IsOk());  // key0 rewritten last: now the newest
  }
  TuneCache c = OpenOrDie(path, kLimit);
  const auto st = c.Stats();
  EXPECT_TRUE(st.compacted);
  ASSERT_GT(st.dropped_entries, 0);
  EXPECT_EQ(st.entries + st.dropped_entries, kKeys);
  const auto after = static_cast<int64_t>(fs::file_size(path));
  EXPECT_LE(after, kLimit / 4 * 3);
  EXPECT_GT(after, kLimit / 2);  // dropped only what it had to (lines are ~90 bytes)
  EXPECT_EQ(c.Find("key0"), Cost(1000));
  // The kept entries are the newest: keys dropped_entries+1 .. kKeys-1, plus key0.
  for (int k = 1; k < kKeys; ++k)
    EXPECT_EQ(c.Find("key" + std::to_string(k)).has_value(), k > st.dropped_entries) << k;
  TuneCache again = OpenOrDie(path);
  EXPECT_EQ(again.Stats().entries, st.entries);
}

// Compaction renames a new file over the path while other processes append: a writer that
// opened the old file must notice (it locked an unlinked inode) and write to the new one, so no
// entry is lost. Two children append distinct keys, each followed by filler lines of one key
// that keep the file growing past the bound; the parent compacts (Open) again and again. The
// children write their keys in kRounds rounds, and after each round keep appending filler
// until the parent says it has compacted once more (a byte on the child's tick pipe), so at
// least kRounds compactions overlap the appends however the processes are scheduled (on two
// busy cores the children once finished between two of the parent's opens).
TEST(TuneCache, CompactionWhileOthersAppendLosesNothing) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  constexpr int64_t kLimit = 64 * 1024;  // 3/4 of it holds the 400 distinct lines (~38 KiB)
  constexpr int kChildren = 2;
  constexpr int kRounds = 4;
  constexpr int kPerRound = 50;
  constexpr int kFiller = 10;
  { TuneCache c = OpenOrDie(path); }
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> pids;
  std::vector<int> ticks;  // the parent's write end of each child's tick pipe
  for (int child = 0; child < kChildren; ++child) {
    int tick[2];
    ASSERT_EQ(::pipe(tick), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      ::close(tick[1]);
      ::fcntl(tick[0], F_SETFL, O_NONBLOCK);
      char byte;
      while (::read(gate[0], &byte, 1) > 0) {}
      auto c = TuneCache::Open(path, stof::engine::kMaxTuneCacheBytes);
      if (!c.IsOk()) ::_exit(10);
      for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < kPerRound; ++k) {
          const int i = round * kPerRound + k;
          if (!c->Put("c" + std::to_string(child) + "/" + std::to_string(i), Cost(i)).IsOk())
            ::_exit(11);
          for (int f = 0; f < kFiller; ++f)
            if (!c->Put("filler", Cost(f)).IsOk()) ::_exit(11);
        }
        for (int f = 0; ::read(tick[0], &byte, 1) != 1; ++f)
          if (!c->Put("filler", Cost(f % kFiller)).IsOk()) ::_exit(11);
      }
      ::_exit(0);
    }
    ::close(tick[0]);
    pids.push_back(pid);
    ticks.push_back(tick[1]);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // go
  // A child that has taken its last tick may exit before the next one is written.
  const auto old_sigpipe = std::signal(SIGPIPE, SIG_IGN);
  int compactions = 0;
  int running = kChildren;
  while (running > 0) {
    auto c = TuneCache::Open(path, kLimit);
    ASSERT_TRUE(c.IsOk()) << c.Message();
    EXPECT_EQ(c->Stats().warning, "");
    EXPECT_EQ(c->Stats().dropped_entries, 0);
    if (c->Stats().compacted > 0) {
      compactions += c->Stats().compacted;
      for (int fd : ticks) (void)!::write(fd, "t", 1);
    }
    int status = 0;
    for (pid_t& pid : pids) {
      if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed: " << status;
        pid = 0;
        --running;
      }
    }
  }
  std::signal(SIGPIPE, old_sigpipe);
  for (int fd : ticks) ::close(fd);
  EXPECT_GE(compactions, kRounds) << "each child waited for a compaction after each round";
  TuneCache c = OpenOrDie(path);
  EXPECT_EQ(c.Stats().skipped_lines, 0);
  EXPECT_EQ(c.Stats().entries, kChildren * kRounds * kPerRound + 1);
  for (int child = 0; child < kChildren; ++child)
    for (int i = 0; i < kRounds * kPerRound; ++i)
      ASSERT_EQ(c.Find(std::string("c").append(std::to_string(child)).append("/").append(std::to_string(i))), Cost(i)) << child << " " << i;
  std::cout << "[ note     ] " << compactions << " compactions while appending\n";
}

// The same race made deterministic: this test holds LOCK_EX (as a compacting process would),
// a Put blocks on it, the file is replaced by rename, the lock is released. The Put then holds
// the lock of an unlinked file and must notice and append to the new one.
TEST(TuneCache, WriterBlockedDuringReplacementWritesToTheNewFile) {
  const stof::engine::testing::TestDir tmp("stof_tune_cache_");
  const fs::path& dir = tmp.Dir();
  const std::string path = (dir / "tune-cache.jsonl").string();
  TuneCache c = OpenOrDie(path);
  const int held = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  std::atomic<bool> put_ok{false};
  std::thread writer([&] { put_ok = c.Put("late", Cost(42)).IsOk(); });
  // Wait until the writer is blocked in flock: /proc/locks lists waiters as "-> FLOCK".
  bool blocked = false;
  for (int i = 0; i < 500 && !blocked; ++i) {
    blocked = Contains(Read("/proc/locks"), "-> FLOCK");
    if (!blocked) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(blocked) << "the writer never blocked on the lock (no /proc/locks?)";
  const fs::path other = dir / "replacement.jsonl";
  Write(other, Line("kept", 1));
  fs::rename(other, path);
  ASSERT_EQ(::flock(held, LOCK_UN), 0);
  ::close(held);
  writer.join();
  EXPECT_TRUE(put_ok.load());
  TuneCache again = OpenOrDie(path);
  EXPECT_EQ(again.Find("late"), Cost(42));  // written to the new file, not the unlinked one
  EXPECT_TRUE(again.Find("kept").has_value());
  EXPECT_EQ(again.Stats().entries, 2);
}

TEST(TuneCache, DefaultPathHonoursTheEnvironment) {
  EXPECT_EQ(TuneCachePathFrom("/c", "/x", "/h"), "/c/tune-cache.jsonl");
  EXPECT_EQ(TuneCachePathFrom("", "/x", "/h"), "/x/stof/tune-cache.jsonl");
  EXPECT_EQ(TuneCachePathFrom(nullptr, "/x", "/h"), "/x/stof/tune-cache.jsonl");
  EXPECT_EQ(TuneCachePathFrom(nullptr, "rel", "/h"), "/h/.cache/stof/tune-cache.jsonl");
  EXPECT_EQ(TuneCachePathFrom(nullptr, nullptr, "/h"), "/h/.cache/stof/tune-cache.jsonl");
  EXPECT_EQ(TuneCachePathFrom(nullptr, nullptr, ""), "");
  EXPECT_EQ(TuneCachePathFrom(nullptr, nullptr, nullptr), "");

  const char* names[] = {"STOF_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::optional<std::string> saved[3];
  for (int i = 0; i < 3; ++i)
    if (const char* v = std::getenv(names[i])) saved[i] = v;
  ::setenv("STOF_CACHE_DIR", "/env/cache", 1);
  ::setenv("XDG_CACHE_HOME", "/env/xdg", 1);
  ::setenv("HOME", "/env/home", 1);
  EXPECT_EQ(DefaultTuneCachePath(), "/env/cache/tune-cache.jsonl");
  ::unsetenv("STOF_CACHE_DIR");
  EXPECT_EQ(DefaultTuneCachePath(), "/env/xdg/stof/tune-cache.jsonl");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultTuneCachePath(), "/env/home/.cache/stof/tune-cache.jsonl");
  ::unsetenv("HOME");
  EXPECT_EQ(DefaultTuneCachePath(), "");
  for (int i = 0; i < 3; ++i) {
    if (saved[i]) ::setenv(names[i], saved[i]->c_str(), 1);
    else ::unsetenv(names[i]);
  }
}
