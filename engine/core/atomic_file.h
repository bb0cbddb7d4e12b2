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
// - A read-only file (no write permission for this user, or no write bit at all: what `chmod
//   a-w` makes, which stops root too, as it stops editors) is not replaced unless the settings
//   allow it (`stof --force`); a file with other hard links is replaced at this name only,
//   and the settings' notice says so (the other names keep the old content).
// - A target that exists and is not a regular file (a terminal, a pipe, /dev/null) has no
//   content to keep: it is written in place, without a temporary.
// - The temporary is "<name>.tmp-<pid>-<n>", with <name> shortened (at a UTF-8 character) so
//   the whole fits the folder's file-name limit (255 bytes on most file systems).
// - Once the settings' cancel flag is set, Write and Commit fail ("interrupted") and remove the
//   temporary; RemoveTemporariesInProgress removes those of writes still running (the CLI's
//   interrupt handling calls it before it exits). Only a process killed outright (kill -9, a
//   crash) leaves a temporary beside the old file.
// POSIX only (open, fsync, rename).
#pragma once

#include <sys/types.h>

#include <atomic>
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
  Status Fail(const std::string& what, int err);  // err 0: no errno text
  void Abandon();

  std::string m_path, m_target, m_temp;  // m_temp empty: writing the target in place
  int m_fd = -1;
  bool m_existed = false;  // the target existed when we started (for the message)
  uint64_t m_other_links = 0;  // hard links of the replaced file besides this name
  bool m_failed = false, m_committed = false;
};

// Process-wide settings of every AtomicFile; the CLI sets them once at start.
struct AtomicFileSettings {
  bool replace_read_only = false;             // replace a read-only target (stof --force)
  const std::atomic<bool>* cancel = nullptr;  // when set: writes stop, temporaries go
  void (*notice)(const std::string& text) = nullptr;  // what a write did besides (hard links)
};
void SetAtomicFileSettings(const AtomicFileSettings& settings);
AtomicFileSettings CurrentAtomicFileSettings();
// Unlinks the temporaries of the writes in progress; gives how many. Thread-safe; not
// async-signal-safe (call it from a thread, not a signal handler).
int RemoveTemporariesInProgress();

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
