// Tests of the built-in DeviceSpec table and its lookup (engine/device/device_spec.h).
#include "engine/device/device_spec.h"

#include <gtest/gtest.h>

using namespace stof::engine;

TEST(DeviceSpec, BuiltinsExistAndValidate) {
  const auto& all = BuiltinDevices();
  ASSERT_EQ(all.size(), 4u);
  for (const DeviceSpec& d : all) {
    Status s = d.Validate();
    EXPECT_TRUE(s.IsOk()) << d.name << ": " << s.Message();
    EXPECT_EQ(d.source, "built-in");
    EXPECT_LE(d.smem_per_block_bytes, d.smem_per_sm_bytes) << d.name;
  }
}

TEST(DeviceSpec, LookupByFullNameAndAlias) {
  for (const DeviceSpec& d : BuiltinDevices()) {
    auto hit = FindBuiltinDevice(d.name);
    ASSERT_TRUE(hit.IsOk()) << hit.Message();
    EXPECT_EQ(*hit, d);
  }
  EXPECT_EQ(FindBuiltinDevice("h100-sxm-80gb")->name, "H100-SXM-80GB");  // case-insensitive
  EXPECT_EQ(FindBuiltinDevice("h100")->name, "H100-SXM-80GB");
  EXPECT_EQ(FindBuiltinDevice("H100")->name, "H100-SXM-80GB");
  EXPECT_EQ(FindBuiltinDevice("a100")->name, "A100-PCIe-40GB");
  EXPECT_EQ(FindBuiltinDevice("4090")->name, "RTX-4090");
  EXPECT_EQ(FindBuiltinDevice("h200")->name, "H200");
}

TEST(DeviceSpec, UnknownNameListsKnownNames) {
  auto miss = FindBuiltinDevice("v100");
  ASSERT_FALSE(miss.IsOk());
  EXPECT_NE(miss.Message().find("'v100'"), std::string::npos) << miss.Message();
  for (const DeviceSpec& d : BuiltinDevices())
    EXPECT_NE(miss.Message().find(d.name), std::string::npos) << miss.Message();
  EXPECT_FALSE(FindBuiltinDevice("").IsOk());
  // "h" matches several built-ins: ambiguous, so refused rather than guessed.
  EXPECT_FALSE(FindBuiltinDevice("h").IsOk());
}

TEST(DeviceSpec, H100Figures) {
  DeviceSpec d = *FindBuiltinDevice("h100");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.smem_per_block_bytes, 232448);  // 227 KiB opt-in
  EXPECT_EQ(d.smem_per_sm_bytes, 233472);     // 228 KiB
  EXPECT_EQ(d.max_warps_per_sm, 64);
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
}

TEST(DeviceSpec, ValidateNamesTheField) {
  DeviceSpec d = *FindBuiltinDevice("a100");
  d.sm_count = 0;
  Status s = d.Validate("gpu");
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), "gpu: sm_count: must be positive");
  d = *FindBuiltinDevice("a100");
  d.name.clear();
  EXPECT_NE(d.Validate().Message().find("name"), std::string::npos);
}
