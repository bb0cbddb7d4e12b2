// The one way the project opens a file it reads: InputFile opens only a regular file, never
// blocks (a FIFO, socket or device is refused by its kind, before and after the open), and
// refuses a file over the caller's size limit with the limit named. Used by every reader of
// outside input: mask files (mask_io.cpp, the NPY reader streams through Read), plans
// (plan_file.cpp), HuggingFace configs (model_config.cpp), layer profiles (profiler/), the
// studio's recent-files list and, for its kind check, the tuning cache. docs/robustness.md
// ("Reading files") lists each format's limit.
// Invariants:
// - Nothing is read through mmap: a file truncated while it is read gives "read failed", never
//   SIGBUS. A short read (the file shrank) names how many bytes were read of how many.
// - Messages name the path and the reason: "p.json: is a FIFO (named pipe), not a regular
//   file", "c.json: file is 20000000 bytes; HuggingFace configs are at most 16777216
//   bytes (16 MiB)", "l.json: cannot open: a symlink loop (too many levels of symbolic links)".
// POSIX only (open, fstat, read).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/status.h"

namespace stof::engine {

// What a reader accepts: `what` names the format in plural for messages ("plans"), `max_bytes`
// is its size limit.
struct FileLimit {
  std::string_view what;
  uint64_t max_bytes = 0;
};

class InputFile {
 public:
  // Opens `path` for reading if it is a regular file of at most `limit.max_bytes` bytes.
  static Expected<InputFile> Open(const std::string& path, const FileLimit& limit);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  uint64_t Size() const { return m_size; }  // at the open
  const std::string& Path() const { return m_path; }

  // Reads up to n bytes at the current position; gives the count (0 at the end).
  Expected<size_t> ReadSome(char* dst, size_t n);
  // Reads exactly n bytes; a short read is "<path>: read failed after X of Y bytes (...)".
  Status ReadExactly(char* dst, size_t n);
  Status Seek(uint64_t offset);
  // From the start to the size at the open, as one string.
  Expected<std::string> ReadAll();

 private:
  InputFile() = default;
  std::string m_path;
  int m_fd = -1;
  uint64_t m_size = 0;
};

// The whole file as bytes, through InputFile (the limit applies).
Expected<std::string> ReadFileBounded(const std::string& path, const FileLimit& limit);

// "a FIFO (named pipe)", "a socket", "a character device", "a block device", "a directory",
// "a regular file": what stat found, for messages.
std::string FileKindText(mode_t mode);

// Refuses what InputFile refuses (a missing path is fine: `ok`), for writers that open the
// file themselves (the tuning cache creates and locks its file).
Status CheckNotSpecialFile(const std::string& path);

}  // namespace stof::engine
