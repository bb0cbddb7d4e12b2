// AtomicFile (atomic_file.h): temporary beside the target, fsync, rename, folder fsync.
// Why fsync before rename: on file systems that delay allocation (ext4, xfs) a crash after the
// rename but before the data reached the disk can leave the new name on an empty file, losing
// the old content too. Why the folder fsync: it makes the rename itself durable; it is best
// effort (some file systems refuse it), as the rename has already happened.
#include "engine/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

namespace stof::engine {

namespace {

std::atomic<ssize_t (*)(int, const void*, size_t)> g_write_hook{nullptr};
std::atomic<int (*)(int)> g_fsync_hook{nullptr};
std::atomic<uint64_t> g_temp_counter{0};

std::atomic<bool> g_replace_read_only{false};
std::atomic<const std::atomic<bool>*> g_cancel{nullptr};
std::atomic<void (*)(const std::string&)> g_notice{nullptr};

// The temporaries of writes in progress, for RemoveTemporariesInProgress.
std::mutex& TempsMutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& Temps() {
  static std::set<std::string> s;
  return s;
}
void TrackTemp(const std::string& temp, bool live) {
  std::lock_guard<std::mutex> lock(TempsMutex());
  if (live) Temps().insert(temp);
  else Temps().erase(temp);
}

// Symlinks followed this many times at most (Linux's own limit for a path is 40).
constexpr int kMaxSymlinkHops = 40;
// One write(2) call writes at most this much, so a cancel is seen within a MiB.
constexpr size_t kMaxWriteChunk = size_t{1} << 20;

bool Cancelled() {
  const std::atomic<bool>* c = g_cancel.load();
  return c != nullptr && c->load();
}

ssize_t DoWrite(int fd, const void* data, size_t n) {
  if (auto hook = g_write_hook.load()) return hook(fd, data, n);
  return ::write(fd, data, n);
}

int DoFsync(int fd) {
  if (auto hook = g_fsync_hook.load()) return hook(fd);
  return ::fsync(fd);
}

std::string Folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Follows symlinks at the last component of `path` (the folders on the way may be links too;
// rename works through them). Gives the file that is to be replaced.
Expected<std::string> ResolveTarget(const std::string& path) {
  std::string p = path;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::string link(PATH_MAX, '\0');
    const ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
    if (n < 0)
      return MakeError(path + ": cannot read the symlink " + p + ": " + std::strerror(errno));
    if (n == 0) return p;
    link.resize(static_cast<size_t>(n));
    p = (link.front() == '/' || p.find('/') == std::string::npos) ? link : Folder(p) + "/" + link;
  }
  return MakeError(path + ": cannot follow the symlink: " + std::strerror(ELOOP));
}

// "<folder>/<name>.tmp-<pid>-", with <name> cut (at a UTF-8 character boundary) so that the
// name plus the suffix and a counter of up to 20 digits fit the folder's file-name limit.
std::string TempStem(const std::string& target) {
  const std::string folder = Folder(target);
  const long limit = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  const size_t name_max = limit > 0 ? static_cast<size_t>(limit) : 255;
  const std::string suffix = ".tmp-" + std::to_string(::getpid()) + "-";
  std::string base = BaseName(target);
  const size_t room = name_max > suffix.size() + 20 ? name_max - suffix.size() - 20 : 1;
  if (base.size() > room) {
    size_t cut = room;
    while (cut > 0 && (static_cast<unsigned char>(base[cut]) & 0xC0) == 0x80) --cut;
    base.resize(cut);
  }
  const size_t slash = target.rfind('/');
  return (slash == std::string::npos ? "" : target.substr(0, slash + 1)) + base + suffix;
}

// A target the user cannot write, or one with no write bit at all (root may write it, but
// `chmod a-w` says "keep this", which editors honour too).
bool IsReadOnly(const std::string& target, const struct stat& st) {
  if ((st.st_mode & 0222) == 0) return true;
  return ::access(target.c_str(), W_OK) != 0 && errno == EACCES;
}

}  // namespace

void SetAtomicFileSettings(const AtomicFileSettings& settings) {
  g_replace_read_only = settings.replace_read_only;
  g_cancel = settings.cancel;
  g_notice = settings.notice;
}

AtomicFileSettings CurrentAtomicFileSettings() {
  AtomicFileSettings s;
  s.replace_read_only = g_replace_read_only.load();
  s.cancel = g_cancel.load();
  s.notice = g_notice.load();
  return s;
}

int RemoveTemporariesInProgress() {
  std::lock_guard<std::mutex> lock(TempsMutex());
  int removed = 0;
  for (const std::string& t : Temps()) removed += ::unlink(t.c_str()) == 0 ? 1 : 0;
  Temps().clear();
  return removed;
}

void SetAtomicFileHooksForTesting(const AtomicFileHooks& hooks) {
  g_write_hook = hooks.write;
  g_fsync_hook = hooks.fsync;
}

Expected<AtomicFile> AtomicFile::Create(const std::string& path) {
  if (path.empty()) return MakeError("cannot write a file with an empty name");
  STOF_ASSIGN_OR_RETURN(auto target, ResolveTarget(path));
  AtomicFile f;
  f.m_path = path;
  f.m_target = std::move(target);
  if (BaseName(f.m_target).empty()) return MakeError(path + ": is a directory, not a file name");

  struct stat st {};
  f.m_existed = ::stat(f.m_target.c_str(), &st) == 0;
  if (f.m_existed && S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory");
  if (f.m_existed && !S_ISREG(st.st_mode)) {
    // A terminal, pipe or device: nothing to keep, and no folder to put a temporary in.
    f.m_fd = ::open(f.m_target.c_str(), O_WRONLY | O_CLOEXEC);
    if (f.m_fd < 0) return MakeError(path + ": cannot open for writing: " + std::strerror(errno));
    return f;
  }

  if (f.m_existed && !g_replace_read_only.load() && IsReadOnly(f.m_target, st)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return MakeError(path + ": is read-only (mode " + mode + "): not replaced (the file is "
                     "unchanged; make it writable or force the write)");
  }
  if (f.m_existed) f.m_other_links = st.st_nlink > 1 ? static_cast<uint64_t>(st.st_nlink - 1) : 0;

  const std::string folder = Folder(f.m_target);
  const std::string stem = TempStem(f.m_target);
  for (int attempt = 0; attempt < 100 && f.m_fd < 0; ++attempt) {
    f.m_temp = stem + std::to_string(g_temp_counter.fetch_add(1));
    f.m_fd = ::open(f.m_temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f.m_fd < 0 && errno != EEXIST) break;
  }
  if (f.m_fd < 0) {
    const int err = errno;
    f.m_temp.clear();  // nothing was created
    return MakeError(path + ": cannot create a file in " + folder + ": " + std::strerror(err) +
                     (f.m_existed ? " (the file is unchanged)" : ""));
  }
  TrackTemp(f.m_temp, true);
  // Keep the replaced file's permissions (harmless if refused: the file is then 0666 - umask).
  if (f.m_existed) (void)::fchmod(f.m_fd, st.st_mode & 07777);
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_target(std::move(other.m_target)),
      m_temp(std::exchange(other.m_temp, std::string())),
      m_fd(std::exchange(other.m_fd, -1)),
      m_existed(other.m_existed),
      m_other_links(other.m_other_links),
      m_failed(other.m_failed),
      m_committed(other.m_committed) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    if (!m_committed) Abandon();
    m_path = std::move(other.m_path);
    m_target = std::move(other.m_target);
    m_temp = std::exchange(other.m_temp, std::string());
    m_fd = std::exchange(other.m_fd, -1);
    m_existed = other.m_existed;
    m_other_links = other.m_other_links;
    m_failed = other.m_failed;
    m_committed = other.m_committed;
  }
  return *this;
}

AtomicFile::~AtomicFile() {
  if (!m_committed) Abandon();
}

void AtomicFile::Abandon() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (!m_temp.empty()) {
    ::unlink(m_temp.c_str());
    TrackTemp(m_temp, false);
  }
  m_temp.clear();
  m_failed = true;
}

Status AtomicFile::Fail(const std::string& what, int err) {
  const bool in_place = m_temp.empty();
  Abandon();
  std::string message = m_path + ": " + what;
  if (err != 0) message += std::string(": ") + std::strerror(err);
  if (!in_place) message += m_existed ? " (the file is unchanged)" : " (nothing was written)";
  return MakeError(message);
}

Status AtomicFile::Write(std::string_view bytes) {
  if (m_failed || m_committed)
    return MakeError(m_path + ": write after a failed or finished write");
  size_t done = 0;
  while (done < bytes.size()) {
    if (Cancelled()) return Fail("interrupted", 0);
    const ssize_t n =
        DoWrite(m_fd, bytes.data() + done, std::min(bytes.size() - done, kMaxWriteChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail("cannot write", n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status AtomicFile::Commit(FileIdentity* written) {
  if (m_failed || m_committed)
    return MakeError(m_path + ": commit after a failed or finished write");
  if (m_temp.empty()) {  // in place: a device or pipe; nothing to flush or rename
    const int rc = ::close(m_fd);
    m_fd = -1;
    if (rc != 0) return Fail("cannot write", errno);
    m_committed = true;
    return Status::Ok();
  }
  if (Cancelled()) return Fail("interrupted", 0);
  if (DoFsync(m_fd) != 0) return Fail("cannot write (flushing to disk)", errno);
  struct stat st {};
  if (::fstat(m_fd, &st) != 0) return Fail("cannot write", errno);
  // close can report a deferred write error (NFS): the file is not complete then.
  const int rc = ::close(m_fd);
  m_fd = -1;
  if (rc != 0) return Fail("cannot write", errno);
  if (Cancelled()) return Fail("interrupted", 0);
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0)
    return Fail("cannot replace the file", errno);
  TrackTemp(m_temp, false);
  m_temp.clear();
  m_committed = true;
  if (auto notice = g_notice.load(); notice != nullptr && m_other_links > 0) {
    notice(m_path + ": had " + std::to_string(m_other_links) + " other hard link" +
           (m_other_links == 1 ? "" : "s") + " (other names of the same file): " +
           (m_other_links == 1 ? "it keeps" : "they keep") +
           " the old content; the new content is at this name only");
  }
  const int dir = ::open(Folder(m_target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  if (written != nullptr) {
    written->device = static_cast<uint64_t>(st.st_dev);
    written->inode = static_cast<uint64_t>(st.st_ino);
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes, FileIdentity* written) {
  STOF_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  STOF_RETURN_IF_ERROR(f.Write(bytes));
  return f.Commit(written);
}

}  // namespace stof::engine
