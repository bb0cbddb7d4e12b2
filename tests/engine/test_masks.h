// Shared by the tests that need a generated mask (tests/engine, and mha_choice_test.cpp in
// tests/gpu): the paper-default mask of a pattern at length n (the test fails, with the
// generator's message, if generation fails).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "engine/mask/mask_spec.h"

namespace stof::engine::testing {

inline Mask PatternMask(const std::string& pattern, int64_t n) {
  MaskSpec spec;
  spec.pattern = pattern;
  spec.seq_len = n;
  auto m = Generate(spec);
  EXPECT_TRUE(m.IsOk()) << m.Message();
  return m.IsOk() ? std::move(*m) : Mask{};
}

}  // namespace stof::engine::testing
