// InputFile (file_read.h). Why stat before open and fstat after: opening a FIFO for reading
// blocks until a writer comes (`stof plan validate p.json` hung forever), and a device such
// as /dev/zero never ends (`stof graph --config /dev/zero` grew to 13.7 GB). The stat refuses
// them without opening; O_NONBLOCK and the fstat of the opened descriptor close the window in
// which the path is replaced by one between the two calls.
#include "engine/core/file_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace stof::engine {

namespace {

// "(16 MiB)" for whole MiB / GiB, else nothing: the limit as people say it.
std::string BinaryUnits(uint64_t n) {
  if (n >= (uint64_t{1} << 30) && n % (uint64_t{1} << 30) == 0)
    return " (" + std::to_string(n >> 30) + " GiB)";
  if (n >= (uint64_t{1} << 20) && n % (uint64_t{1} << 20) == 0)
    return " (" + std::to_string(n >> 20) + " MiB)";
  return "";
}

// Why open or stat failed, in words; ELOOP and ENOENT said plainly.
std::string OpenErrorText(int err) {
  switch (err) {
    case ENOENT: return "no such file";
    case ELOOP: return "a symlink loop (too many levels of symbolic links)";
    case ENOTDIR: return "a folder on the path is not a folder";
    default: return std::strerror(err);
  }
}

Status KindError(const std::string& path, mode_t mode) {
  return MakeError(path + ": is " + FileKindText(mode) + ", not a regular file");
}

}  // namespace

std::string FileKindText(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

Status CheckNotSpecialFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return MakeError(path + ": cannot open: " + OpenErrorText(errno));
  }
  if (!S_ISREG(st.st_mode)) return KindError(path, st.st_mode);
  return Status::Ok();
}

Expected<InputFile> InputFile::Open(const std::string& path, const FileLimit& limit) {
  if (path.empty()) return MakeError("cannot read a file with an empty name");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return MakeError(path + ": cannot open: " + OpenErrorText(errno));
  if (!S_ISREG(st.st_mode)) return KindError(path, st.st_mode);

  InputFile f;
  f.m_path = path;
  f.m_fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (f.m_fd < 0) return MakeError(path + ": cannot open: " + OpenErrorText(errno));
  if (::fstat(f.m_fd, &st) != 0) return MakeError(path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return KindError(path, st.st_mode);  // replaced after the stat
  const int flags = ::fcntl(f.m_fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(f.m_fd, F_SETFL, flags & ~O_NONBLOCK);
  f.m_size = static_cast<uint64_t>(st.st_size);
  if (f.m_size > limit.max_bytes) {
    return MakeError(path + ": file is " + std::to_string(f.m_size) + " bytes; " +
                     std::string(limit.what) + " are at most " +
                     std::to_string(limit.max_bytes) + " bytes" + BinaryUnits(limit.max_bytes));
  }
  return f;
}

InputFile::InputFile(InputFile&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_fd(std::exchange(other.m_fd, -1)),
      m_size(other.m_size) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_path = std::move(other.m_path);
    m_fd = std::exchange(other.m_fd, -1);
    m_size = other.m_size;
  }
  return *this;
}

InputFile::~InputFile() {
  if (m_fd >= 0) ::close(m_fd);
}

Expected<size_t> InputFile::ReadSome(char* dst, size_t n) {
  for (;;) {
    const ssize_t got = ::read(m_fd, dst, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) return MakeError(m_path + ": cannot read: " + std::strerror(errno));
  }
}

Status InputFile::ReadExactly(char* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    STOF_ASSIGN_OR_RETURN(const size_t got, ReadSome(dst + done, n - done));
    if (got == 0) {
      return MakeError(m_path + ": read failed after " + std::to_string(done) + " of " +
                       std::to_string(n) + " bytes (the file is shorter than when it was " +
                       "opened: changed while it was read?)");
    }
    done += got;
  }
  return Status::Ok();
}

Status InputFile::Seek(uint64_t offset) {
  if (::lseek(m_fd, static_cast<off_t>(offset), SEEK_SET) < 0)
    return MakeError(m_path + ": cannot seek: " + std::strerror(errno));
  return Status::Ok();
}

Expected<std::string> InputFile::ReadAll() {
  STOF_RETURN_IF_ERROR(Seek(0));
  std::string bytes(static_cast<size_t>(m_size), '\0');
  STOF_RETURN_IF_ERROR(ReadExactly(bytes.data(), bytes.size()));
  return bytes;
}

Expected<std::string> ReadFileBounded(const std::string& path, const FileLimit& limit) {
  STOF_ASSIGN_OR_RETURN(auto f, InputFile::Open(path, limit));
  return f.ReadAll();
}

}  // namespace stof::engine
