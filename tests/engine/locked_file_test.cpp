// OpenLocked (engine/core/locked_file.h): the locked inode is the file at the path, also after
// another writer replaced it; special files are refused before they are opened; a shared lock
// shuts out an exclusive one and not another shared one; ByteAt reads single bytes.
#include "engine/core/locked_file.h"
#include "test_dir.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using stof::engine::ByteAt;
using stof::engine::FileLock;
using stof::engine::OpenLocked;
using stof::engine::WriteFileAtomic;

class LockedFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return m_tmp.Path(name); }
  stof::engine::testing::TestDir m_tmp{"stof_locked_"};
  const fs::path& m_dir = m_tmp.Dir();
};

TEST_F(LockedFileTest, CreatesTheFileAndLocksItsInode) {
  const std::string p = Path("c.jsonl");
  auto f = OpenLocked(p, FileLock::kExclusive);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  EXPECT_EQ(f->size, 0);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(f->id.inode, static_cast<uint64_t>(st.st_ino));
  ASSERT_EQ(::write(f->fd.Get(), "ab\n", 3), 3);
  EXPECT_EQ(ByteAt(f->fd.Get(), 0), 'a');
  EXPECT_EQ(ByteAt(f->fd.Get(), 2), '\n');
  EXPECT_EQ(ByteAt(f->fd.Get(), 3), -1) << "past the end";
}

TEST_F(LockedFileTest, AReplacedPathIsLockedAtItsNewInode) {
  const std::string p = Path("c.jsonl");
  auto old_file = OpenLocked(p, FileLock::kShared);
  ASSERT_TRUE(old_file.IsOk());
  stof::engine::FileIdentity written;
  ASSERT_TRUE(WriteFileAtomic(p, "new\n", &written).IsOk());
  auto f = OpenLocked(p, FileLock::kShared);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  EXPECT_EQ(f->id, written);
  EXPECT_NE(f->id, old_file->id);
  EXPECT_EQ(f->size, 4);
}

TEST_F(LockedFileTest, SharedLocksShutOutAnExclusiveOne) {
  const std::string p = Path("c.jsonl");
  auto a = OpenLocked(p, FileLock::kShared);
  auto b = OpenLocked(p, FileLock::kShared);
  ASSERT_TRUE(a.IsOk() && b.IsOk());
  // flock locks belong to the open file description: a third descriptor cannot take LOCK_EX
  // while the two shared locks are held, and can once they are gone.
  auto c = OpenLocked(p, FileLock::kShared);
  ASSERT_TRUE(c.IsOk());
  ASSERT_EQ(::flock(c->fd.Get(), LOCK_UN), 0);
  EXPECT_NE(::flock(c->fd.Get(), LOCK_EX | LOCK_NB), 0);
  a->fd.Reset();
  b->fd.Reset();
  EXPECT_EQ(::flock(c->fd.Get(), LOCK_EX | LOCK_NB), 0);
}

TEST_F(LockedFileTest, RefusesSpecialFilesAndFolders) {
  const std::string fifo = Path("p.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = OpenLocked(fifo, FileLock::kShared);
  ASSERT_FALSE(f.IsOk());
  EXPECT_NE(f.Message().find("p.jsonl"), std::string::npos) << f.Message();
  auto d = OpenLocked(m_dir.string(), FileLock::kShared);
  EXPECT_FALSE(d.IsOk());
  auto none = OpenLocked(Path("no/such/folder/c.jsonl"), FileLock::kShared);
  ASSERT_FALSE(none.IsOk());
  EXPECT_NE(none.Message().find("cannot open"), std::string::npos) << none.Message();
}

}  // namespace
