// Tests of the atomic file writer (engine/core/atomic_file.h): round trips, permissions kept,
// symlinks (the target replaced, the link kept), a folder refused, a permission-denied folder
// (run as an unprivileged user in a child process when the tests run as root), and injected
// failures (write to /dev/full, EIO part way, a failed fsync, an abandoned write): in every
// failure the old file stays byte for byte and no temporary is left behind. Also: a 250-byte
// file name (the temporary's name fits the 255-byte limit), read-only files refused unless
// forced, a hard-linked file replaced at its name with a notice, and a cancel (Ctrl-C in the
// CLI) that stops a write part way and removes its temporary.
#include "engine/core/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stof::engine::AtomicFile;
using stof::engine::AtomicFileHooks;
using stof::engine::AtomicFileSettings;
using stof::engine::RemoveTemporariesInProgress;
using stof::engine::SetAtomicFileSettings;
using stof::engine::FileIdentity;
using stof::engine::SetAtomicFileHooksForTesting;
using stof::engine::WriteFileAtomic;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("stof_atomic_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    SetAtomicFileHooksForTesting({});
    SetAtomicFileSettings({});
    std::error_code ec;
    fs::permissions(m_dir, fs::perms::owner_all, ec);
    fs::remove_all(m_dir, ec);
  }

  std::string Path(const std::string& name) const { return (m_dir / name).string(); }

  static std::string Read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  static void Put(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  // The names in the test folder, sorted: a leftover temporary shows up here.
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(m_dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path m_dir;
};

TEST_F(AtomicFileTest, WritesAndReplacesWholeFiles) {
  const std::string p = Path("m.json");
  ASSERT_TRUE(WriteFileAtomic(p, "first").IsOk());
  EXPECT_EQ(Read(p), "first");
  ASSERT_TRUE(WriteFileAtomic(p, std::string(1 << 20, 'x')).IsOk());
  EXPECT_EQ(Read(p), std::string(1 << 20, 'x'));
  ASSERT_TRUE(WriteFileAtomic(p, "").IsOk());
  EXPECT_EQ(Read(p), "");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.json"});

  // Streamed in pieces, as mask NPY files are.
  auto f = AtomicFile::Create(p);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  ASSERT_TRUE(f->Write("ab").IsOk());
  EXPECT_EQ(Read(p), "");  // the target changes only at the commit
  ASSERT_TRUE(f->Write("cd").IsOk());
  FileIdentity id;
  ASSERT_TRUE(f->Commit(&id).IsOk());
  EXPECT_EQ(Read(p), "abcd");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(id, (FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}));
  EXPECT_FALSE(f->Write("more").IsOk());
  EXPECT_EQ(Names(), std::vector<std::string>{"m.json"});
}

TEST_F(AtomicFileTest, KeepsTheReplacedFilesPermissionsAndUsesTheUmaskForNewOnes) {
  const std::string p = Path("plan.json");
  Put(p, "old");
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomic(p, "new").IsOk());
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);

  const mode_t old_mask = ::umask(022);
  ASSERT_TRUE(WriteFileAtomic(Path("new.json"), "x").IsOk());
  ::umask(old_mask);
  ASSERT_EQ(::stat(Path("new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(AtomicFileTest, ReplacesTheSymlinkTargetAndKeepsTheLink) {
  fs::create_directories(m_dir / "real");
  const std::string target = Path("real/m.npy");
  Put(target, "old");
  // A relative link in another folder, and a link to that link.
  fs::create_symlink("real/m.npy", m_dir / "link.npy");
  fs::create_symlink("link.npy", m_dir / "link2.npy");
  ASSERT_TRUE(WriteFileAtomic(Path("link2.npy"), "new").IsOk());
  EXPECT_TRUE(fs::is_symlink(m_dir / "link.npy"));
  EXPECT_TRUE(fs::is_symlink(m_dir / "link2.npy"));
  EXPECT_EQ(fs::read_symlink(m_dir / "link.npy"), "real/m.npy");
  EXPECT_EQ(Read(target), "new");
  EXPECT_EQ(Read(Path("link2.npy")), "new");
  EXPECT_EQ(Names(), (std::vector<std::string>{"link.npy", "link2.npy", "real"}));

  auto f = AtomicFile::Create(Path("link2.npy"));
  ASSERT_TRUE(f.IsOk());
  EXPECT_EQ(f->Target(), Path("real/m.npy"));

  // A dangling link: its target is created, the link stays.
  fs::create_symlink(m_dir / "real" / "later.json", m_dir / "dangling.json");
  ASSERT_TRUE(WriteFileAtomic(Path("dangling.json"), "made").IsOk());
  EXPECT_TRUE(fs::is_symlink(m_dir / "dangling.json"));
  EXPECT_EQ(Read(Path("real/later.json")), "made");

  // A loop is an error, not a hang.
  fs::create_symlink("loop_b", m_dir / "loop_a");
  fs::create_symlink("loop_a", m_dir / "loop_b");
  auto loop = WriteFileAtomic(Path("loop_a"), "x");
  ASSERT_FALSE(loop.IsOk());
  EXPECT_EQ(loop.Message(),
            Path("loop_a") + ": cannot follow the symlink: Too many levels of symbolic links");
}

TEST_F(AtomicFileTest, RefusesFoldersAndMissingFolders) {
  auto dir = WriteFileAtomic(m_dir.string(), "x");
  EXPECT_EQ(dir.Message(), m_dir.string() + ": is a directory");
  auto slash = WriteFileAtomic(m_dir.string() + "/", "x");
  EXPECT_FALSE(slash.IsOk());
  auto missing = WriteFileAtomic(Path("no/such/m.png"), "x");
  EXPECT_EQ(missing.Message(), Path("no/such/m.png") + ": cannot create a file in " +
                                   Path("no/such") + ": No such file or directory");
  EXPECT_EQ(WriteFileAtomic("", "x").Message(), "cannot write a file with an empty name");
}

TEST_F(AtomicFileTest, APermissionDeniedFolderLeavesTheOldFile) {
  const std::string p = Path("ro/m.json");
  fs::create_directories(m_dir / "ro");
  Put(p, "old");
  ASSERT_EQ(::chmod(p.c_str(), 0666), 0);  // the file is writable: only the folder refuses
  ASSERT_EQ(::chmod((m_dir / "ro").c_str(), 0555), 0);
  // Root ignores folder permissions: the write runs in a child that drops to "nobody".
  int pipe_fd[2];
  ASSERT_EQ(::pipe(pipe_fd), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fd[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const auto s = WriteFileAtomic(p, "new");
    const std::string m = s.IsOk() ? "ok" : s.Message();
    (void)!::write(pipe_fd[1], m.data(), m.size());
    ::_exit(0);
  }
  ::close(pipe_fd[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;)
    message.append(buf, static_cast<size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child could not drop privileges";
  EXPECT_EQ(message, p + ": cannot create a file in " + Path("ro") +
                         ": Permission denied (the file is unchanged)");
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(fs::directory_iterator(m_dir / "ro")->path().filename(), "m.json");
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir / "ro"), fs::directory_iterator()), 1);
}

// Writes go to /dev/full instead of the temporary: the kernel's own ENOSPC.
int g_full_fd = -1;
ssize_t WriteToDevFull(int /*fd*/, const void* data, size_t n) {
  return ::write(g_full_fd, data, n);
}

TEST_F(AtomicFileTest, ANoSpaceErrorLeavesTheOldFileAndNoTemporary) {
  const std::string p = Path("m.npy");
  Put(p, "old content");
  g_full_fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(g_full_fd, 0);
  SetAtomicFileHooksForTesting({WriteToDevFull, nullptr});
  auto s = WriteFileAtomic(p, std::string(100000, 'n'));
  SetAtomicFileHooksForTesting({});
  ::close(g_full_fd);
  EXPECT_EQ(s.Message(), p + ": cannot write: No space left on device (the file is unchanged)");
  EXPECT_EQ(Read(p), "old content");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.npy"});

  // A new file that cannot be written is not created at all.
  SetAtomicFileHooksForTesting({WriteToDevFull, nullptr});
  g_full_fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  s = WriteFileAtomic(Path("new.npy"), "x");
  SetAtomicFileHooksForTesting({});
  ::close(g_full_fd);
  EXPECT_EQ(s.Message(),
            Path("new.npy") + ": cannot write: No space left on device (nothing was written)");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.npy"});
}

// The first 4096 bytes go through, then EIO: a disk failing part way through a big write.
size_t g_allowed = 0;
ssize_t FailAfterAPage(int fd, const void* data, size_t n) {
  if (g_allowed == 0) {
    errno = EIO;
    return -1;
  }
  const size_t k = std::min(n, g_allowed);
  g_allowed -= k;
  return ::write(fd, data, k);  // a short write: the writer must loop
}

TEST_F(AtomicFileTest, AnIoErrorPartWayLeavesTheOldFile) {
  const std::string p = Path("m.png");
  Put(p, "old");
  g_allowed = 4096;
  SetAtomicFileHooksForTesting({FailAfterAPage, nullptr});
  auto f = AtomicFile::Create(p);
  ASSERT_TRUE(f.IsOk());
  EXPECT_TRUE(f->Write(std::string(3000, 'a')).IsOk());
  auto s = f->Write(std::string(3000, 'b'));
  SetAtomicFileHooksForTesting({});
  EXPECT_EQ(s.Message(), p + ": cannot write: Input/output error (the file is unchanged)");
  EXPECT_FALSE(f->Commit().IsOk());
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.png"});
}

int FsyncFails(int /*fd*/) {
  errno = EIO;
  return -1;
}

TEST_F(AtomicFileTest, AFailedFlushLeavesTheOldFile) {
  const std::string p = Path("plan.json");
  Put(p, "old");
  SetAtomicFileHooksForTesting({nullptr, FsyncFails});
  auto s = WriteFileAtomic(p, "new");
  SetAtomicFileHooksForTesting({});
  EXPECT_EQ(s.Message(),
            p + ": cannot write (flushing to disk): Input/output error (the file is unchanged)");
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"plan.json"});
}

TEST_F(AtomicFileTest, AnAbandonedWriteRemovesItsTemporary) {
  const std::string p = Path("m.json");
  Put(p, "old");
  {
    auto f = AtomicFile::Create(p);
    ASSERT_TRUE(f.IsOk());
    ASSERT_TRUE(f->Write("half").IsOk());
    EXPECT_EQ(Names().size(), 2u);  // m.json and its temporary
    AtomicFile moved = std::move(*f);
    EXPECT_TRUE(moved.Write(" more").IsOk());
  }
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.json"});
}

TEST_F(AtomicFileTest, DevicesAreWrittenInPlace) {
  // /dev/null has nothing to keep (and its folder is no place for a temporary).
  EXPECT_TRUE(WriteFileAtomic("/dev/null", "anything").IsOk());
  // /dev/full gives ENOSPC to a direct write too, named as such.
  auto s = WriteFileAtomic("/dev/full", "x");
  EXPECT_EQ(s.Message(), "/dev/full: cannot write: No space left on device");
}

// The temporary was "<name>.tmp-<pid>-<n>": a legal 250-byte name made a 265-byte one and
// failed with "File name too long". Now the name part is cut (at a UTF-8 character) to fit.
TEST_F(AtomicFileTest, ALongFileNameGetsATemporaryThatFits) {
  const std::string name = std::string(243, 'a') + "\xc3\xa9.json";  // 250 bytes, ends in "é.json"
  ASSERT_EQ(name.size(), 250u);
  const std::string p = Path(name);
  ASSERT_TRUE(WriteFileAtomic(p, "first").IsOk());
  ASSERT_TRUE(WriteFileAtomic(p, "second").IsOk());
  EXPECT_EQ(Read(p), "second");
  auto f = AtomicFile::Create(p);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  std::vector<std::string> names = Names();
  ASSERT_EQ(names.size(), 2u);
  const std::string temp = names[0] == name ? names[1] : names[0];
  EXPECT_LE(temp.size(), 255u);
  EXPECT_EQ(temp.rfind(std::string(200, 'a'), 0), 0u) << temp;  // still says whose it is
  EXPECT_NE(temp.find(".tmp-" + std::to_string(::getpid()) + "-"), std::string::npos) << temp;
}

// A read-only file is not replaced (it was, silently), unless the settings force it; its
// content and mode stay. Root passes access(2), so the "no write bit at all" rule is what
// stops it; an unprivileged user is stopped by access(2) on a file of another user.
TEST_F(AtomicFileTest, AReadOnlyFileIsRefusedUnlessForced) {
  const std::string p = Path("plan.json");
  Put(p, "old");
  ASSERT_EQ(::chmod(p.c_str(), 0444), 0);
  auto s = WriteFileAtomic(p, "new");
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), p + ": is read-only (mode 0444): not replaced (the file is unchanged; "
                             "make it writable or force the write)");
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"plan.json"});

  AtomicFileSettings force;
  force.replace_read_only = true;
  SetAtomicFileSettings(force);
  ASSERT_TRUE(WriteFileAtomic(p, "new").IsOk());
  EXPECT_EQ(Read(p), "new");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);  // the mode is kept
  SetAtomicFileSettings({});

  // Writable by its owner only, written by someone else (a child that drops from root to
  // "nobody"; as an unprivileged user the test cannot be someone else): access(2) refuses.
  if (::geteuid() != 0) return;
  const std::string q = Path("other.json");
  Put(q, "old");
  ASSERT_EQ(::chmod(q.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(m_dir.c_str(), 0777), 0);  // the folder is writable: only the file refuses
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    const auto r = WriteFileAtomic(q, "new");
    ::_exit(!r.IsOk() && r.Message() == q + ": is read-only (mode 0644): not replaced (the file "
                                            "is unchanged; make it writable or force the write)"
                ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Read(q), "old");
}

std::vector<std::string> g_notices;
void Collect(const std::string& text) { g_notices.push_back(text); }

// Writing over a file with another hard link replaced it at this name and left the other name
// on the old content, silently; now the notice says so.
TEST_F(AtomicFileTest, AHardLinkedFileIsReplacedAtItsNameWithANotice) {
  const std::string p = Path("m.json");
  Put(p, "old");
  ASSERT_EQ(::link(p.c_str(), Path("other.json").c_str()), 0);
  g_notices.clear();
  AtomicFileSettings settings;
  settings.notice = Collect;
  SetAtomicFileSettings(settings);
  ASSERT_TRUE(WriteFileAtomic(p, "new").IsOk());
  EXPECT_EQ(Read(p), "new");
  EXPECT_EQ(Read(Path("other.json")), "old");
  ASSERT_EQ(g_notices.size(), 1u);
  EXPECT_EQ(g_notices[0], p + ": had 1 other hard link (other names of the same file): it keeps "
                              "the old content; the new content is at this name only");
  // Now a file of its own: no notice.
  ASSERT_TRUE(WriteFileAtomic(p, "newer").IsOk());
  EXPECT_EQ(g_notices.size(), 1u);
}

// Ctrl-C in the CLI sets the cancel flag: the write stops at the next chunk, the temporary
// goes and the old file stays (a 1 GiB mask write left its temporary behind).
TEST_F(AtomicFileTest, ACancelStopsTheWriteAndRemovesTheTemporary) {
  const std::string p = Path("m.npy");
  Put(p, "old");
  std::atomic<bool> cancel{false};
  AtomicFileSettings settings;
  settings.cancel = &cancel;
  SetAtomicFileSettings(settings);
  auto f = AtomicFile::Create(p);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  ASSERT_TRUE(f->Write(std::string(3 << 20, 'x')).IsOk());
  EXPECT_EQ(Names().size(), 2u);
  cancel = true;
  auto w = f->Write(std::string(3 << 20, 'y'));
  ASSERT_FALSE(w.IsOk());
  EXPECT_EQ(w.Message(), p + ": interrupted (the file is unchanged)");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.npy"});
  EXPECT_EQ(Read(p), "old");
  // A commit after the cancel does not replace the file either.
  cancel = false;
  auto g = AtomicFile::Create(p);
  ASSERT_TRUE(g.IsOk());
  ASSERT_TRUE(g->Write("new").IsOk());
  cancel = true;
  EXPECT_EQ(g->Commit().Message(), p + ": interrupted (the file is unchanged)");
  EXPECT_EQ(Read(p), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"m.npy"});
}

// What the CLI's watchdog calls before it ends an interrupted process.
TEST_F(AtomicFileTest, RemoveTemporariesInProgressRemovesThemAll) {
  Put(Path("a.json"), "old");
  auto a = AtomicFile::Create(Path("a.json"));
  auto b = AtomicFile::Create(Path("b.json"));
  ASSERT_TRUE(a.IsOk() && b.IsOk());
  ASSERT_TRUE(a->Write("x").IsOk());
  EXPECT_EQ(Names().size(), 3u);
  EXPECT_EQ(RemoveTemporariesInProgress(), 2);
  EXPECT_EQ(Names(), std::vector<std::string>{"a.json"});
  EXPECT_EQ(Read(Path("a.json")), "old");
  EXPECT_EQ(RemoveTemporariesInProgress(), 0);
}

}  // namespace
