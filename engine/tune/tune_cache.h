// TuneCache: the tuner's persistent record of measured candidate costs, so that no (device,
// shape, segment, template, parameters) candidate is ever measured twice, also across runs.
// Used by the tuner (engine/tune/), i.e. `stof tune` and the studio's tuning worker; the studio's
// GUI thread reads Stats(). Tested by tests/engine/tune_cache_test.cpp; described in
// docs/tuner.md ("Tuning cache").
//
// The file is JSON lines, one entry per line, appended and never edited in place:
//   {"v":1,"key":"...","us":12.5,"bytes":1048576,"repeats":100,"method":"...","error":""}
// Invariants:
// - Several processes may use one file at once (two `stof tune`, the studio and the CLI):
//   appends hold flock(LOCK_EX) and write each line with one write() on an O_APPEND
//   descriptor; readers hold LOCK_SH, so they never see half a line from a live writer.
// - A corrupt line (not JSON, a missing or mistyped field, a negative or non-finite time, an
//   unknown "v", longer than kMaxTuneCacheLineBytes, or a last line without '\n' left by a
//   crashed writer) is skipped and counted, never an error; the valid lines around it load.
// - Later lines win: the entry for a key is the last valid line with that key.
// - The file stays bounded: when it is larger than the bound at Open, Open compacts it under
//   LOCK_EX (the latest entry per key, written to a temporary beside it and renamed over) to
//   at most 3/4 of the bound, dropping the oldest entries when the latest ones alone are
//   larger, so that a full cache is not rewritten at every start.
// - Nothing here exits or throws; failures are Status values whose message names the path.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/status.h"

namespace stof::engine {

// The size bound checked at Open (64 MiB, ~250k entries of ~250 bytes).
inline constexpr int64_t kMaxTuneCacheBytes = int64_t{64} << 20;
// Lines longer than this (newline excluded) are skipped when read and refused by Put.
inline constexpr int64_t kMaxTuneCacheLineBytes = int64_t{64} << 10;

// One measured (or failed) candidate.
struct CachedCost {
  double us = 0;           // median latency in microseconds; finite, >= 0
  double bytes = -1;       // DRAM bytes moved; -1 = unknown (no counters), else >= 0
  int64_t repeats = 0;     // timed runs behind `us`
  std::string method;      // how it was measured, e.g. "cuda graph + events"
  std::string error;       // non-empty: the candidate failed to run (so it is not retried)

  bool operator==(const CachedCost&) const = default;
};

// What a cache holds and what reading its file found.
struct TuneCacheStats {
  int64_t entries = 0;          // distinct keys in memory
  int64_t loaded_lines = 0;     // valid lines of the current file read (or appended) so far
  int64_t skipped_lines = 0;    // corrupt / unknown-version / over-long / torn lines seen
  int64_t file_bytes = 0;       // bytes of the current file accounted for (read or appended)
  int64_t appended_lines = 0;   // lines this instance wrote with Put
  int64_t dropped_entries = 0;  // entries Open's compaction removed to respect the size bound
  bool compacted = false;       // Open rewrote the file to bound its size
  std::string warning;          // a non-fatal problem (compaction could not write), else ""
};

// The five parts joined unambiguously: each part is written as <decimal length>:<bytes> and the
// parts are separated by '|', so ("a|b", "c") and ("a", "b|c") give different keys.
// Example: TuneCacheKey("H100", "b1", "s0", "t", "") == "4:H100|2:b1|2:s0|1:t|0:".
std::string TuneCacheKey(const std::string& device, const std::string& shape,
                         const std::string& segment, const std::string& tmpl,
                         const std::string& params);

// The cache file's path from the environment's values (null = unset): STOF_CACHE_DIR when
// non-empty, else XDG_CACHE_HOME when absolute (the XDG spec ignores relative ones) + "/stof",
// else HOME + "/.cache/stof"; the file is "tune-cache.jsonl" in that directory. "" when none
// applies: the caller then uses TuneCache::InMemory() and says so.
std::string TuneCachePathFrom(const char* stof_cache_dir, const char* xdg_cache_home,
                              const char* home);
// TuneCachePathFrom(getenv("STOF_CACHE_DIR"), getenv("XDG_CACHE_HOME"), getenv("HOME")).
std::string DefaultTuneCachePath();

// Threads: a TuneCache is meant to be used by one thread (the tuner's worker). Every method is
// nonetheless safe to call concurrently: the map and the counters sit behind a mutex held only
// briefly (so the GUI thread's Stats()/Find() never wait on file locks), and file work is
// serialized by a second mutex. Movable, not copyable; a moved-from cache may only be destroyed
// or assigned to.
class TuneCache {
 public:
  // Creates the directory (mkdir -p) and the file when missing and loads every valid entry.
  // When the file is larger than `max_bytes` it is compacted first (see the file comment;
  // `max_bytes` is a parameter so tests can use a small bound). Fails, naming the path, when
  // the file cannot be created, opened for appending, locked or read
  // ("/x/tune-cache.jsonl: cannot open: Permission denied"); the caller then falls back to
  // InMemory() with a warning.
  static Expected<TuneCache> Open(const std::string& path, int64_t max_bytes = kMaxTuneCacheBytes);
  // A cache without a file (tests, `--no-cache`, no usable cache directory).
  static TuneCache InMemory();

  TuneCache(TuneCache&&) noexcept;
  TuneCache& operator=(TuneCache&&) noexcept;
  TuneCache(const TuneCache&) = delete;
  TuneCache& operator=(const TuneCache&) = delete;
  ~TuneCache();

  std::optional<CachedCost> Find(const std::string& key) const;

  // Records the entry in memory, then appends its line to the file (see the file comment).
  // Refuses (nothing recorded) an empty key, a non-finite or negative `us`, `bytes` neither -1
  // nor finite >= 0, negative `repeats`, strings that are not UTF-8, or a line over
  // kMaxTuneCacheLineBytes. A failed write (disk full) is an error after the entry was recorded
  // in memory; the partial line is cut off again so the file stays clean.
  Status Put(const std::string& key, const CachedCost& cost);

  // Reads lines other processes appended since the last read. When the file was replaced
  // (another process compacted it, or it was deleted and recreated) or truncated, reads it
  // again from the start; entries already in memory stay (the file's entries overwrite them).
  // No-op for an in-memory cache.
  Status Reload();

  TuneCacheStats Stats() const;
  // The file's path; "" for an in-memory cache.
  const std::string& Path() const;
  bool IsInMemory() const;

 private:
  struct State;
  explicit TuneCache(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace stof::engine
