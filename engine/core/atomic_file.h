// The one way the project writes a file: AtomicFile writes a temporary file in the target's
// folder, flushes it to disk (fsync) and renames it over the target, so a reader sees the old
// file or the new one, never a part. Used by every writer: mask files, layout exports, plans,
// profiles and Chrome traces, layer profiles, the tuning cache's compaction, the studio's
// recent-files list, screenshots and --dump-state. docs/robustness.md states the guarantee.
// Invariants:
// - A symlink at the path is kept and the file it points to is replaced (followed to the end,
//   relative links resolved against the link's folder; a dangling link creates its target).
// - On any failure (no space, I/O error, permission, a full quota) the temporary is removed,
//   the old file is left exactly as it was, and the message names the path and the reason
//   ("m.npy: cannot write: No space left on device (the file is unchanged)").
// - A replaced file keeps its permission bits; a new file gets 0666 minus the umask.
// - A target that exists and is not a regular file (a terminal, a pipe, /dev/null) has no
//   content to keep: it is written in place, without a temporary.
// - A process killed mid-write (kill -9, power loss after the fsync) leaves the old file and a
//   "<name>.tmp-<pid>-<n>" temporary beside it; nothing removes stale temporaries.
// POSIX only (open, fsync, rename).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/status.h"

namespace stof::engine {

// Which file a commit produced (the tuning cache compares it with the inode it has locked).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

class AtomicFile {
 public:
  // Resolves `path` (symlinks), checks it is not a folder and creates the temporary. Errors:
  // "<path>: cannot create a file in <folder>: Permission denied", "<path>: is a directory".
  static Expected<AtomicFile> Create(const std::string& path);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Without a successful Commit: closes and removes the temporary; the target is untouched.
  ~AtomicFile();

  // Appends bytes to the temporary. After a failure the file is abandoned (the temporary is
  // removed) and every later call fails.
  Status Write(std::string_view bytes);
  // fsync, close, rename over the target, fsync the folder. `written` (optional) receives the
  // new file's identity.
  Status Commit(FileIdentity* written = nullptr);

  const std::string& Path() const { return m_path; }      // as given
  const std::string& Target() const { return m_target; }  // symlinks resolved

 private:
  AtomicFile() = default;
  Status Fail(const std::string& what, int err);
  void Abandon();

  std::string m_path, m_target, m_temp;  // m_temp empty: writing the target in place
  int m_fd = -1;
  bool m_existed = false;  // the target existed when we started (for the message)
  bool m_failed = false, m_committed = false;
};

// Create + Write + Commit of a whole byte string.
Status WriteFileAtomic(const std::string& path, std::string_view bytes,
                       FileIdentity* written = nullptr);

// Tests only: replace the write(2) / fsync(2) calls AtomicFile makes (nullptr: the real ones),
// to inject ENOSPC or EIO part way through. Not thread-safe against writes in flight.
struct AtomicFileHooks {
  ssize_t (*write)(int fd, const void* data, size_t n) = nullptr;
  int (*fsync)(int fd) = nullptr;
};
void SetAtomicFileHooksForTesting(const AtomicFileHooks& hooks);

}  // namespace stof::engine
