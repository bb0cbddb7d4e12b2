// TuneCache (tune_cache.h): the JSON-lines file of measured candidate costs, its locking
// protocol, its tolerant reader and its compaction. POSIX only (open/flock/pread/rename).
//
// Locking protocol, shared by every process that uses the file:
// - Appending (Put): open O_APPEND, flock(LOCK_EX), write the whole line with one write().
//   O_APPEND makes the kernel place the line at the end of the file as it is at write time
//   (a remembered offset would overwrite another process's line); the exclusive lock keeps
//   the check of the last byte (torn-line repair, below) and the write one step, and keeps
//   readers from seeing a line half written.
// - Reading (Open, Reload): flock(LOCK_SH), so no cooperating writer is mid-line while we read;
//   an unterminated last line therefore is a torn write of a crashed process, not a live one.
// - Compaction (Open, when over the bound): flock(LOCK_EX) on the old file, write a temporary
//   in the same directory (rename is atomic only within one file system), rename it over
//   (engine/core/atomic_file.h, the writer every file of the project goes through).
// Every locker goes through OpenLocked (engine/core/locked_file.h), which makes sure the inode
// it locked is still the file at the path after a compaction replaced it.
//
// Torn lines: a process killed in the middle of write() (or a full disk) can leave a last line
// without '\n'. The reader skips it and counts it; Put sees the missing '\n' under its lock and
// writes one first, so the fragment stays a line of its own and the new entry is not glued to
// it. JSON-lines: the line format keeps every entry independent, so one bad line costs one
// entry, never the file.
#include "engine/tune/tune_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/file_read.h"
#include "engine/core/json_io.h"
#include "engine/core/json_read.h"
#include "engine/core/locked_file.h"

namespace stof::engine {

namespace {

constexpr int kLineVersion = 1;
constexpr size_t kReadChunk = size_t{1} << 20;

std::string Errno() { return std::strerror(errno); }

using Entry = std::pair<std::string, CachedCost>;

// A line's entry, or nullopt when the line is corrupt or of another version.
std::optional<Entry> ParseLine(std::string_view line) {
  namespace jr = json_read;
  try {
    JsonParseOptions options;
    options.refuse_duplicate_keys = false;  // as before: a tolerant reader, the last one wins
    const auto parsed = ParseJson(line, "", options);
    if (!parsed.IsOk()) return std::nullopt;
    const jr::Json& j = *parsed;
    if (!j.is_object()) return std::nullopt;
    const auto v = j.find("v");
    if (v == j.end() || !v->is_number_integer() || v->get<int64_t>() != kLineVersion) return std::nullopt;
    const jr::ObjectReader r(j, "", "", {"v", "key", "us", "bytes", "repeats", "method", "error"});
    Entry e;
    e.first = r.String("key", /*allow_empty=*/false);
    e.second.us = r.Number("us", 0, DBL_MAX);
    e.second.bytes = r.Number("bytes", -1, DBL_MAX);
    if (e.second.bytes < 0 && e.second.bytes != -1) return std::nullopt;  // only -1 means unknown
    e.second.repeats = r.Int("repeats", 0, std::numeric_limits<int64_t>::max());
    e.second.method = r.String("method", /*allow_empty=*/true);
    e.second.error = r.String("error", /*allow_empty=*/true);
    return e;
  } catch (const jr::JsonPathError&) {
    return std::nullopt;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// Checks an entry and gives its line (with the '\n'); `who` prefixes the messages.
Expected<std::string> FormatLine(const std::string& who, const std::string& key, const CachedCost& c) {
  const std::string at = who + ": put: ";
  if (key.empty()) return MakeError(at + "key: expected a non-empty string");
  if (!std::isfinite(c.us) || c.us < 0)
    return MakeError(at + "us: expected a finite number >= 0, got " + std::to_string(c.us));
  if (!(c.bytes == -1 || (std::isfinite(c.bytes) && c.bytes >= 0)))
    return MakeError(at + "bytes: expected -1 (unknown) or a finite number >= 0, got " +
                     std::to_string(c.bytes));
  if (c.repeats < 0) return MakeError(at + "repeats: expected >= 0, got " + std::to_string(c.repeats));
  const std::pair<const char*, const std::string*> strings[] = {
      {"key", &key}, {"method", &c.method}, {"error", &c.error}};
  for (const auto& [name, s] : strings) {
    try {
      (void)nlohmann::json(*s).dump();
    } catch (const nlohmann::json::exception&) {
      return MakeError(at + name + ": not valid UTF-8");
    }
  }
  // Keys in insertion order (ordered_json) so the file reads naturally: v, key, us, ...
  nlohmann::ordered_json j;
  j["v"] = kLineVersion;
  j["key"] = key;
  j["us"] = c.us;
  j["bytes"] = c.bytes;
  j["repeats"] = c.repeats;
  j["method"] = c.method;
  j["error"] = c.error;
  std::string line = j.dump();  // compact: no raw newline can appear (strings escape them)
  if (static_cast<int64_t>(line.size()) > kMaxTuneCacheLineBytes)
    return MakeError(at + "line of " + std::to_string(line.size()) + " bytes, more than the " +
                     std::to_string(kMaxTuneCacheLineBytes) + " a cache line may have (key too long?)");
  line += '\n';
  return line;
}

struct ReadResult {
  std::vector<Entry> entries;  // valid lines, in file order
  int64_t loaded = 0;
  int64_t skipped = 0;
  int64_t end = 0;        // offset after the last byte read
  int last_byte = -1;     // the byte at end - 1 (-1 when nothing was read)
};

bool Blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

// Reads `fd` from `offset` to its end, line by line; the caller holds a lock. Empty lines are
// ignored (Put writes one to close a torn line); every other invalid line is counted.
Expected<ReadResult> ReadLines(int fd, int64_t offset, const std::string& path) {
  ReadResult out;
  std::string buf(kReadChunk, '\0');
  std::string line;
  bool too_long = false;  // the current line passed the bound: its bytes are not kept
  auto finish_line = [&]() {
    if (too_long) {
      ++out.skipped;
    } else if (!Blank(line)) {
      if (auto e = ParseLine(line)) {
        out.entries.push_back(std::move(*e));
        ++out.loaded;
      } else {
        ++out.skipped;
      }
    }
    line.clear();
    too_long = false;
  };
  int64_t pos = offset;
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(pos));
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(path + ": cannot read: " + Errno());
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const std::string_view part = chunk.substr(0, nl);
      if (!too_long) {
        if (static_cast<int64_t>(line.size() + part.size()) > kMaxTuneCacheLineBytes) {
          too_long = true;
          line.clear();
        } else {
          line.append(part);
        }
      }
      if (nl == std::string_view::npos) break;
      finish_line();
      chunk.remove_prefix(nl + 1);
    }
    pos += n;
    out.last_byte = static_cast<unsigned char>(buf[static_cast<size_t>(n) - 1]);
  }
  // An unterminated last line: a torn write (readers hold LOCK_SH, so no live writer is in the
  // middle of it). Counted once; the offset moves past it so it is not counted again.
  if (too_long || !Blank(line)) ++out.skipped;
  out.end = pos;
  return out;
}

// Writes `bytes` over `path` atomically (atomic_file.h: temporary in the same directory,
// fsync, rename; the old file's permissions kept) and gives the new file's identity. The
// caller holds LOCK_EX on the old file.
Expected<FileIdentity> ReplaceFile(const std::string& path, const std::string& bytes) {
  FileIdentity written;
  STOF_RETURN_IF_ERROR(WriteFileAtomic(path, bytes, &written));
  return written;
}

}  // namespace

struct TuneCache::State {
  std::string path;  // "" = in memory
  int64_t max_bytes = kMaxTuneCacheBytes;

  // Guards `map` and `stats`; held only for in-memory work, never across file I/O.
  mutable std::mutex map_mutex;
  std::unordered_map<std::string, CachedCost> map;
  TuneCacheStats stats;  // `entries` is filled from map.size() on demand

  // Serializes file work (Put's append, Reload) and guards the read position below.
  std::mutex io_mutex;
  bool have_file = false;  // `file_id`, `offset` and `last_byte` describe a file read before
  FileIdentity file_id;
  int64_t offset = 0;      // bytes of that file read or appended by us so far
  int last_byte = -1;      // the byte at offset - 1, to notice a rewrite in place

  std::string Who() const { return path.empty() ? std::string("tune cache (in memory)") : path; }

  // Adds what a read found; the caller holds io_mutex (not map_mutex).
  void Apply(ReadResult&& r, const FileIdentity& id) {
    {
      std::lock_guard<std::mutex> lock(map_mutex);
      for (Entry& e : r.entries) map.insert_or_assign(std::move(e.first), std::move(e.second));
      stats.loaded_lines += r.loaded;
      stats.skipped_lines += r.skipped;
      stats.file_bytes = r.end;
    }
    have_file = true;
    file_id = id;
    offset = r.end;
    last_byte = r.last_byte;
  }
};

TuneCache::TuneCache(std::unique_ptr<State> state) : m_state(std::move(state)) {}
TuneCache::TuneCache(TuneCache&&) noexcept = default;
TuneCache& TuneCache::operator=(TuneCache&&) noexcept = default;
TuneCache::~TuneCache() = default;

TuneCache TuneCache::InMemory() { return TuneCache(std::make_unique<State>()); }

Expected<TuneCache> TuneCache::Open(const std::string& path, int64_t max_bytes) {
  if (path.empty()) return MakeError("tune cache: empty path (use TuneCache::InMemory() for no file)");
  if (max_bytes <= 0) return MakeError(path + ": max_bytes: expected > 0, got " + std::to_string(max_bytes));
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return MakeError(path + ": cannot create directory " + parent.string() + ": " + ec.message());
  }
  auto state = std::make_unique<State>();
  state->path = path;
  state->max_bytes = max_bytes;

  STOF_ASSIGN_OR_RETURN(auto shared, OpenLocked(path, FileLock::kShared));
  if (shared.size <= max_bytes) {
    STOF_ASSIGN_OR_RETURN(auto r, ReadLines(shared.fd.Get(), 0, path));
    state->Apply(std::move(r), shared.id);
    return TuneCache(std::move(state));
  }

  // Over the bound: compact under LOCK_EX. flock cannot upgrade atomically, so release, lock
  // exclusively and read again (others may have appended, or compacted, in between).
  shared.fd.Reset();
  STOF_ASSIGN_OR_RETURN(auto excl, OpenLocked(path, FileLock::kExclusive));
  STOF_ASSIGN_OR_RETURN(auto r, ReadLines(excl.fd.Get(), 0, path));
  if (excl.size <= max_bytes) {  // another process compacted it first
    state->Apply(std::move(r), excl.id);
    return TuneCache(std::move(state));
  }

  // The latest entry per key, in the order of those latest lines (oldest first).
  std::unordered_map<std::string_view, size_t> last;
  for (size_t i = 0; i < r.entries.size(); ++i) last[r.entries[i].first] = i;
  std::vector<std::string> lines;
  std::vector<size_t> kept;
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (last[r.entries[i].first] != i) continue;
    auto line = FormatLine(path, r.entries[i].first, r.entries[i].second);
    if (!line.IsOk()) continue;  // cannot happen for a parsed entry; never write a bad line
    lines.push_back(std::move(*line));
    kept.push_back(i);
  }
  const int64_t target = max_bytes / 4 * 3;
  int64_t total = 0;
  for (const std::string& l : lines) total += static_cast<int64_t>(l.size());
  size_t first = 0;  // drop the oldest until the rest fits the target
  while (first < lines.size() && total > target) total -= static_cast<int64_t>(lines[first++].size());
  std::string bytes;
  bytes.reserve(static_cast<size_t>(total));
  for (size_t i = first; i < lines.size(); ++i) bytes += lines[i];

  auto replaced = ReplaceFile(path, bytes);
  if (!replaced.IsOk()) {
    // Not fatal: the cache works, the file just stays large until a later Open succeeds.
    state->stats.warning = path + ": compaction failed, the file was left as it is: " + replaced.Message();
    state->Apply(std::move(r), excl.id);
    return TuneCache(std::move(state));
  }
  ReadResult compacted;
  for (size_t i = first; i < kept.size(); ++i) compacted.entries.push_back(std::move(r.entries[kept[i]]));
  compacted.loaded = static_cast<int64_t>(compacted.entries.size());
  compacted.skipped = r.skipped;  // what this Open found, though the rewrite dropped those lines
  compacted.end = total;
  compacted.last_byte = total > 0 ? '\n' : -1;
  state->stats.compacted = true;
  state->stats.dropped_entries = static_cast<int64_t>(first);
  state->Apply(std::move(compacted), *replaced);
  return TuneCache(std::move(state));  // the old file's lock goes with `excl`
}

std::optional<CachedCost> TuneCache::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(m_state->map_mutex);
  const auto it = m_state->map.find(key);
  if (it == m_state->map.end()) return std::nullopt;
  return it->second;
}

Status TuneCache::Put(const std::string& key, const CachedCost& cost) {
  State& s = *m_state;
  STOF_ASSIGN_OR_RETURN(auto line, FormatLine(s.Who(), key, cost));
  {
    std::lock_guard<std::mutex> lock(s.map_mutex);
    s.map.insert_or_assign(key, cost);
  }
  if (s.path.empty()) return Status::Ok();

  std::lock_guard<std::mutex> io(s.io_mutex);
  STOF_ASSIGN_OR_RETURN(auto f, OpenLocked(s.path, FileLock::kExclusive));
  const int64_t size = f.size;
  // A last line without '\n' is a torn write of a crashed process: end it first so the new
  // line does not get glued to it (the fragment stays one skipped line).
  if (size > 0 && ByteAt(f.fd.Get(), size - 1) != '\n') line.insert(line.begin(), '\n');
  // One write() of the whole line: with O_APPEND and our exclusive lock, no other line can
  // land inside it, and readers (LOCK_SH) never see it half written.
  ssize_t n;
  do n = ::write(f.fd.Get(), line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    const std::string why = n < 0 ? Errno() : "short write (" + std::to_string(n) + " of " +
                                                  std::to_string(line.size()) + " bytes)";
    // Remove the fragment; if even that fails the next reader skips it as a torn line.
    if (n > 0 && ::ftruncate(f.fd.Get(), static_cast<off_t>(size)) != 0) {
    }
    return MakeError(s.path + ": cannot write: " + why);
  }
  // When nothing was appended since our last read, our own line needs no reading back.
  const bool contiguous = s.have_file && s.file_id == f.id && s.offset == size;
  std::lock_guard<std::mutex> lock(s.map_mutex);
  ++s.stats.appended_lines;
  if (contiguous) {
    s.offset = size + static_cast<int64_t>(line.size());
    s.last_byte = '\n';
    ++s.stats.loaded_lines;
    s.stats.file_bytes = s.offset;
  }
  return Status::Ok();
}

Status TuneCache::Reload() {
  State& s = *m_state;
  if (s.path.empty()) return Status::Ok();
  std::lock_guard<std::mutex> io(s.io_mutex);
  STOF_ASSIGN_OR_RETURN(auto f, OpenLocked(s.path, FileLock::kShared));
  // Start over when the file is not the one we read (replaced or recreated), is shorter than
  // what we read (truncated), or has another byte where our read ended (rewritten in place).
  const bool same = s.have_file && s.file_id == f.id && f.size >= s.offset &&
                    (s.offset == 0 || ByteAt(f.fd.Get(), s.offset - 1) == s.last_byte);
  if (!same) {
    s.offset = 0;
    s.last_byte = -1;
    std::lock_guard<std::mutex> lock(s.map_mutex);
    s.stats.loaded_lines = 0;
    s.stats.skipped_lines = 0;
    s.stats.file_bytes = 0;
  }
  STOF_ASSIGN_OR_RETURN(auto r, ReadLines(f.fd.Get(), s.offset, s.path));
  if (r.end == s.offset) r.last_byte = s.last_byte;  // nothing new
  s.Apply(std::move(r), f.id);
  return Status::Ok();
}

TuneCacheStats TuneCache::Stats() const {
  std::lock_guard<std::mutex> lock(m_state->map_mutex);
  TuneCacheStats out = m_state->stats;
  out.entries = static_cast<int64_t>(m_state->map.size());
  return out;
}

const std::string& TuneCache::Path() const { return m_state->path; }

bool TuneCache::IsInMemory() const { return m_state->path.empty(); }

std::string TuneCacheKey(const std::string& device, const std::string& shape,
                         const std::string& segment, const std::string& tmpl,
                         const std::string& params) {
  std::string key;
  for (const std::string* part : {&device, &shape, &segment, &tmpl, &params}) {
    if (!key.empty()) key += '|';
    key += std::to_string(part->size());
    key += ':';
    key += *part;
  }
  return key;
}

std::string TuneCachePathFrom(const char* stof_cache_dir, const char* xdg_cache_home,
                              const char* home) {
  std::filesystem::path dir;
  if (stof_cache_dir && stof_cache_dir[0] != '\0') {
    dir = stof_cache_dir;
  } else if (xdg_cache_home && xdg_cache_home[0] == '/') {
    dir = std::filesystem::path(xdg_cache_home) / "stof";
  } else if (home && home[0] != '\0') {
    dir = std::filesystem::path(home) / ".cache" / "stof";
  } else {
    return "";
  }
  return (dir / "tune-cache.jsonl").string();
}

std::string DefaultTuneCachePath() {
  return TuneCachePathFrom(std::getenv("STOF_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"),
                           std::getenv("HOME"));
}

}  // namespace stof::engine
