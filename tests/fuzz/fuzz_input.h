// Helpers of the fuzz targets (tests/fuzz/fuzz_*.cpp): the input as a std::string, and the
// input written to a file for loaders that take a path (plans, profiles, the tuning cache), so
// that the target calls the very function `stof` and `stof-studio` call. The file lives in a
// folder of its own per process under $TMPDIR (default /tmp), removed at exit.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace stof::fuzz {

inline std::string AsString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// This process's scratch folder (created on first use, removed at exit).
inline const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                              ("stof-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    static struct Remover {
      std::filesystem::path p;
      ~Remover() {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
      }
    } remover{d};
    return d;
  }();
  return dir;
}

// Writes the input to ScratchDir()/name (replacing it) and returns the path.
inline std::string WriteInput(const uint8_t* data, size_t size, const std::string& name) {
  const std::string path = (ScratchDir() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Stops the fuzzer with a crash report when a documented invariant does not hold.
inline void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace stof::fuzz
