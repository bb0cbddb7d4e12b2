// Tests of the one file opener of every reader (engine/core/file_read.h): regular files read
// whole and in parts; a FIFO, a socket, a character device and a folder refused by their kind
// without blocking (a FIFO with no writer would hang the test if it were opened); the size
// limit named; a symlink loop said as one; a file that shrinks while it is read; and the
// readers that go through it (plans, HuggingFace configs, masks, recent files, the tuning
// cache) refusing a FIFO and /dev/zero the same way.
#include "engine/core/file_read.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/recent_files.h"
#include "engine/graph/model_config.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_io_internal.h"
#include "engine/plan/plan.h"
#include "engine/tune/tune_cache.h"
#include "test_dir.h"

namespace {

namespace fs = std::filesystem;
using stof::engine::FileLimit;
using stof::engine::InputFile;
using stof::engine::ReadFileBounded;

class FileReadTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return m_tmp.Path(name); }
  static void Put(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::string Fifo(const std::string& name) const {
    const std::string p = Path(name);
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0) << std::strerror(errno);
    return p;
  }

  stof::engine::testing::TestDir m_tmp{"stof_file_read_"};
  const fs::path& m_dir = m_tmp.Dir();
};

constexpr FileLimit kPlans{"plans", 1 << 20};

TEST_F(FileReadTest, ReadsARegularFileWholeAndInParts) {
  Put(Path("a.txt"), "hello, world");
  auto whole = ReadFileBounded(Path("a.txt"), kPlans);
  ASSERT_TRUE(whole.IsOk()) << whole.Message();
  EXPECT_EQ(*whole, "hello, world");

  auto f = InputFile::Open(Path("a.txt"), kPlans);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  EXPECT_EQ(f->Size(), 12u);
  char buf[5] = {};
  ASSERT_TRUE(f->Seek(7).IsOk());
  ASSERT_TRUE(f->ReadExactly(buf, 5).IsOk());
  EXPECT_EQ(std::string(buf, 5), "world");
  auto end = f->ReadSome(buf, 5);
  ASSERT_TRUE(end.IsOk());
  EXPECT_EQ(*end, 0u);
  // Past the end: a short read says how much it got.
  ASSERT_TRUE(f->Seek(10).IsOk());
  const auto s = f->ReadExactly(buf, 5);
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), Path("a.txt") + ": read failed after 2 of 5 bytes (the file is shorter "
                                         "than when it was opened: changed while it was read?)");
  Put(Path("empty"), "");
  auto empty = ReadFileBounded(Path("empty"), kPlans);
  ASSERT_TRUE(empty.IsOk()) << empty.Message();
  EXPECT_EQ(*empty, "");
}

TEST_F(FileReadTest, RefusesSpecialFilesByKindWithoutBlocking) {
  const std::string fifo = Fifo("p.json");
  auto f = ReadFileBounded(fifo, kPlans);
  ASSERT_FALSE(f.IsOk());
  EXPECT_EQ(f.Message(), fifo + ": is a FIFO (named pipe), not a regular file");

  auto z = ReadFileBounded("/dev/zero", kPlans);
  ASSERT_FALSE(z.IsOk());
  EXPECT_EQ(z.Message(), "/dev/zero: is a character device, not a regular file");

  auto d = ReadFileBounded(m_dir.string(), kPlans);
  ASSERT_FALSE(d.IsOk());
  EXPECT_EQ(d.Message(), m_dir.string() + ": is a directory, not a regular file");

  const std::string sock = Path("s.json");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  auto s = ReadFileBounded(sock, kPlans);
  ::close(fd);
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), sock + ": is a socket, not a regular file");

  // A symlink to a FIFO is the FIFO.
  fs::create_symlink(fifo, Path("link.json"));
  auto l = ReadFileBounded(Path("link.json"), kPlans);
  ASSERT_FALSE(l.IsOk());
  EXPECT_EQ(l.Message(), Path("link.json") + ": is a FIFO (named pipe), not a regular file");
}

TEST_F(FileReadTest, NamesTheLimitTheMissingFileAndASymlinkLoop) {
  Put(Path("big.json"), std::string(2000, ' '));
  auto big = ReadFileBounded(Path("big.json"), {"HuggingFace configs", 1000});
  ASSERT_FALSE(big.IsOk());
  EXPECT_EQ(big.Message(),
            Path("big.json") + ": file is 2000 bytes; HuggingFace configs are at most 1000 bytes");
  auto big2 = ReadFileBounded(Path("big.json"), {"plans", 1024});
  ASSERT_FALSE(big2.IsOk());
  EXPECT_EQ(big2.Message(), Path("big.json") + ": file is 2000 bytes; plans are at most 1024 bytes");
  Put(Path("mib.json"), std::string((1 << 20) + 1, ' '));
  auto mib = ReadFileBounded(Path("mib.json"), kPlans);
  ASSERT_FALSE(mib.IsOk());
  EXPECT_EQ(mib.Message(), Path("mib.json") +
                               ": file is 1048577 bytes; plans are at most 1048576 bytes (1 MiB)");
  EXPECT_TRUE(ReadFileBounded(Path("big.json"), {"plans", 2000}).IsOk());

  auto missing = ReadFileBounded(Path("none.json"), kPlans);
  ASSERT_FALSE(missing.IsOk());
  EXPECT_EQ(missing.Message(), Path("none.json") + ": cannot open: no such file");

  fs::create_symlink(Path("loop_b.json"), Path("loop_a.json"));
  fs::create_symlink(Path("loop_a.json"), Path("loop_b.json"));
  auto loop = ReadFileBounded(Path("loop_a.json"), kPlans);
  ASSERT_FALSE(loop.IsOk());
  EXPECT_EQ(loop.Message(), Path("loop_a.json") +
                                ": cannot open: a symlink loop (too many levels of symbolic links)");
  auto empty_name = ReadFileBounded("", kPlans);
  ASSERT_FALSE(empty_name.IsOk());
  EXPECT_EQ(empty_name.Message(), "cannot read a file with an empty name");
}

TEST_F(FileReadTest, AFileThatShrinksWhileReadIsAReadFailureNotACrash) {
  Put(Path("m.npy"), std::string(4096, 'x'));
  auto f = InputFile::Open(Path("m.npy"), kPlans);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  fs::resize_file(Path("m.npy"), 100);
  auto all = f->ReadAll();
  ASSERT_FALSE(all.IsOk());
  EXPECT_EQ(all.Message(), Path("m.npy") + ": read failed after 100 of 4096 bytes (the file is "
                                           "shorter than when it was opened: changed while it "
                                           "was read?)");
}

// The NPY reader streams through InputFile: a file cut while it is read names the row it could
// not read (it said "line N") and how far the read got.
TEST_F(FileReadTest, AnNpyCutWhileReadNamesTheRow) {
  const std::string p = Path("m.npy");
  auto mask = stof::engine::Mask::Create(1000, 1000);  // 1 MB of data, past the header's read
  ASSERT_TRUE(mask.IsOk());
  ASSERT_TRUE(stof::engine::SaveMask(p, *mask).IsOk());
  auto f = InputFile::Open(p, kPlans);
  ASSERT_TRUE(f.IsOk()) << f.Message();
  const uint64_t header = f->Size() - 1000 * 1000;
  fs::resize_file(p, header + 120 * 1000 + 40);  // 120 whole rows and part of the next
  auto m = stof::engine::mask_io_detail::LoadNpyFile(*f);
  ASSERT_FALSE(m.IsOk());
  EXPECT_EQ(m.Message(), p + ": read failed after 40 of 1000 bytes (the file is shorter than "
                             "when it was opened: changed while it was read?) (reading row 120 "
                             "of the data)");
}

// Every reader of outside input goes through InputFile: a FIFO and /dev/zero are refused by
// kind (before, `stof plan validate p.json` on a FIFO blocked forever and `stof graph --config
// /dev/zero` grew without bound).
TEST_F(FileReadTest, EveryReaderRefusesAFifoAndDevZero) {
  const std::string fifo_plan = Fifo("p.json");
  const std::string fifo_npy = Fifo("m.npy");
  const std::string fifo_png = Fifo("m.png");
  const std::string fifo_cache = Fifo("cache.jsonl");
  const std::string kind = ": is a FIFO (named pipe), not a regular file";
  EXPECT_EQ(stof::engine::LoadPlan(fifo_plan).Message(), fifo_plan + kind);
  EXPECT_EQ(stof::engine::LoadModelConfig(fifo_plan).Message(), fifo_plan + kind);
  EXPECT_EQ(stof::engine::LoadMask(fifo_plan).Message(), fifo_plan + kind);
  EXPECT_EQ(stof::engine::LoadMask(fifo_npy).Message(), fifo_npy + kind);
  EXPECT_EQ(stof::engine::LoadMask(fifo_png).Message(), fifo_png + kind);
  EXPECT_EQ(stof::engine::LoadRecentFiles(fifo_plan, 10).Message(), fifo_plan + kind);
  EXPECT_EQ(stof::engine::TuneCache::Open(fifo_cache).Message(), fifo_cache + kind);
  const std::string dev = "/dev/zero: is a character device, not a regular file";
  EXPECT_EQ(stof::engine::LoadPlan("/dev/zero").Message(), dev);
  EXPECT_EQ(stof::engine::LoadModelConfig("/dev/zero").Message(), dev);
  // /dev/zero has no extension: the kind comes first, as a missing file's absence does.
  EXPECT_EQ(stof::engine::LoadMask("/dev/zero").Message(), dev);
}

}  // namespace
