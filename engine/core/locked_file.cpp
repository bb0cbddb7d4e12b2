// OpenLocked and UniqueFd (locked_file.h).
#include "engine/core/locked_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/file_read.h"

namespace stof::engine {

namespace {
std::string Errno() { return std::strerror(errno); }
}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    Reset();
    m_fd = std::exchange(o.m_fd, -1);
  }
  return *this;
}

void UniqueFd::Reset() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

Expected<LockedFile> OpenLocked(const std::string& path, FileLock lock, int max_retries) {
  const int lock_op = lock == FileLock::kShared ? LOCK_SH : LOCK_EX;
  for (int attempt = 0; attempt < max_retries; ++attempt) {
    // A FIFO or device at the path is refused before it is opened (file_read.h); O_NONBLOCK
    // keeps one swapped in after the check from blocking the open.
    STOF_RETURN_IF_ERROR(CheckNotSpecialFile(path));
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0666));
    if (fd.Get() < 0) return MakeError(path + ": cannot open: " + Errno());
    int rc;
    do rc = ::flock(fd.Get(), lock_op);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) return MakeError(path + ": cannot lock: " + Errno());
    struct stat locked {};
    if (::fstat(fd.Get(), &locked) != 0) return MakeError(path + ": cannot stat: " + Errno());
    if (!S_ISREG(locked.st_mode)) return MakeError(path + ": not a regular file");
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0) {
      if (errno == ENOENT) continue;  // deleted after our open: open (and create) it again
      return MakeError(path + ": cannot stat: " + Errno());
    }
    if (now.st_dev != locked.st_dev || now.st_ino != locked.st_ino) continue;  // replaced
    LockedFile f;
    f.fd = std::move(fd);
    f.id = FileIdentity{static_cast<uint64_t>(locked.st_dev), static_cast<uint64_t>(locked.st_ino)};
    f.size = static_cast<int64_t>(locked.st_size);
    return f;
  }
  return MakeError(path + ": the file kept being replaced while locking it (" +
                   std::to_string(max_retries) + " attempts)");
}

int ByteAt(int fd, int64_t offset) {
  unsigned char c = 0;
  return ::pread(fd, &c, 1, static_cast<off_t>(offset)) == 1 ? c : -1;
}

}  // namespace stof::engine
