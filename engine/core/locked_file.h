// A file opened under an flock, for files that several processes append to and read (the
// tuning cache, engine/tune/tune_cache.cpp): OpenLocked opens the path (creating it), takes a
// shared or exclusive lock and makes sure the locked inode is still the file at the path.
// flock locks the inode that was opened: once another process has replaced the path (an
// AtomicFile commit, engine/core/atomic_file.h), a process that opened the old inode and then
// got its lock would write into or read an unlinked file, so OpenLocked compares the inode it
// locked with the path's current one and starts again when they differ. Closing the
// descriptor releases the lock. POSIX only (open, flock, fstat, pread).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "engine/core/atomic_file.h"
#include "engine/core/status.h"

namespace stof::engine {

// A file descriptor closed on destruction (closing also releases its flock).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : m_fd(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }
  int Get() const { return m_fd; }
  void Reset();

 private:
  int m_fd = -1;
};

enum class FileLock { kShared, kExclusive };

struct LockedFile {
  UniqueFd fd;      // opened O_RDWR | O_APPEND: a write() lands at the end as it is then
  FileIdentity id;  // the locked inode
  int64_t size = 0;  // the file's size when the lock was taken
};

// Opens `path` read-write for appending (creating it, mode 0666 minus the umask), locks it and
// checks that the locked inode is the path's. Refuses special files (a FIFO, a device) before
// opening them. Errors name the path: "c.jsonl: cannot lock: ...", "c.jsonl: not a regular
// file", and, after `max_retries` replacements in a row, "the file kept being replaced".
Expected<LockedFile> OpenLocked(const std::string& path, FileLock lock, int max_retries = 100);

// The byte at `offset` of `fd`, or -1 when it cannot be read.
int ByteAt(int fd, int64_t offset);

}  // namespace stof::engine
