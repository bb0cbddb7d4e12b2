// A fresh folder per test under the system temp folder (named after the process and the running
// test, so parallel ctest processes never share one), removed with everything in it at the end.
// Used by the engine tests that write files (file_read_test.cpp, locked_file_test.cpp,
// plan_test.cpp, recent_files_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace stof::engine::testing {

class TestDir {
 public:
  explicit TestDir(const std::string& prefix)
      : m_dir(std::filesystem::temp_directory_path() /
              (prefix + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir);
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;
  const std::filesystem::path& Dir() const { return m_dir; }
  std::string Path(const std::string& name) const { return (m_dir / name).string(); }

 private:
  std::filesystem::path m_dir;
};

}  // namespace stof::engine::testing
