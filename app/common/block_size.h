// Parses "BMxBN" (or one number for a square block) for the --block options of `stof`
// (layout, bench mha) and `stof-studio`.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/status.h"
#include "engine/layout/block_layout.h"

namespace stof::app {

struct BlockSize {
  int64_t block_m = 0, block_n = 0;
};

inline engine::Expected<BlockSize> ParseBlockSize(const std::string& text, const std::string& what) {
  auto bad = [&] {
    return engine::Error{what + ": expected BMxBN such as 64x64 (powers of two 16..256), got '" +
                         text + "'"};
  };
  BlockSize b;
  size_t x = text.find_first_of("xX");
  try {
    size_t used = 0;
    if (x == std::string::npos) {
      b.block_m = b.block_n = std::stoll(text, &used);
      if (used != text.size()) return bad();
    } else {
      std::string m = text.substr(0, x), n = text.substr(x + 1);
      b.block_m = std::stoll(m, &used);
      if (used != m.size()) return bad();
      b.block_n = std::stoll(n, &used);
      if (used != n.size()) return bad();
    }
  } catch (const std::exception&) {
    return bad();
  }
  engine::Status s = engine::BlockLayout::CheckBlockSize(b.block_m, b.block_n);
  if (!s.IsOk()) return engine::Error{what + ": " + s.Message()};
  return b;
}

}  // namespace stof::app
