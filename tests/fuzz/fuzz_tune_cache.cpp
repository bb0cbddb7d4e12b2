// Fuzz target: the tuning cache file, JSON lines (engine::TuneCache::Open: `stof tune` and the
// studio's tuner at start, and Reload). Corrupt lines must be skipped and counted, never an
// error; the file is then opened again with a small size bound, which compacts it.
#include <filesystem>

#include "engine/tune/tune_cache.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  const std::string path = fuzz::WriteInput(data, size, "tune-cache.jsonl");
  auto cache = engine::TuneCache::Open(path);
  fuzz::Require(cache.IsOk(), "a readable cache file opens, corrupt lines are skipped");
  const engine::TuneCacheStats s = cache->Stats();
  fuzz::Require(s.entries <= s.loaded_lines && s.entries >= 0 && s.skipped_lines >= 0,
                "entries <= valid lines");
  fuzz::Require(cache->Reload().IsOk(), "Reload of an unchanged file works");
  auto small = engine::TuneCache::Open(path, 256);
  fuzz::Require(small.IsOk(), "compaction to 256 bytes works");
  return 0;
}
