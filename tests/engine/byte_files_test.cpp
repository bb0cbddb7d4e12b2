// Tests of the PNG encoder's failure message (engine/core/byte_files.h): under a memory limit
// stb's encoder fails, and the message says why and how much it needed (it said only
// "encoding failed"). The limit is set in a child process, just above what it already uses.
#include "engine/core/byte_files.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The process's address space now, in bytes (/proc/self/statm, first field, in pages).
long AddressSpaceBytes() {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * ::sysconf(_SC_PAGESIZE);
}

TEST(ByteFiles, APngEncodeOutOfMemorySaysSo) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    // Give back the free top of the heap first: after earlier tests in this process freed
    // large blocks, glibc keeps up to 64 MiB of it (its trim threshold rises with the sizes
    // it sees), and that space, counted in `now`, let the encoder succeed under the limit.
    ::malloc_trim(0);
    const int side = 8192;  // 64 MiB of pixels; stb needs about twice that on top
    std::vector<uint8_t> px(static_cast<size_t>(side) * side, 255);
    const long now = AddressSpaceBytes();
    const rlimit lim{static_cast<rlim_t>(now + (32L << 20)), static_cast<rlim_t>(now + (32L << 20))};
    if (now == 0 || ::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(3);
    const auto png = stof::engine::EncodeGrayPng(px, side, side);
    const std::string m = png.IsOk() ? "ok" : png.Message();
    (void)!::write(fds[1], m.data(), m.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not set its limit";
  EXPECT_EQ(message, "PNG: encoding failed: out of memory (a 8192 x 8192 image of 1 channel "
                     "needs about 134.218 MB while it is compressed)");
}

}  // namespace
