// Tests of the layout files (engine/layout/layout_export.h): the block-class matrix of a
// hand-made layout, the PNG and NPY bytes decoded back, JSON and Flex text equal to the
// layout's own JSON, format names, and errors for an empty layout and an unwritable path.
#include "engine/layout/layout_export.h"

#include <gtest/gtest.h>
#include <stb_image.h>

#include <cstring>
#include <nlohmann/json.hpp>

using stof::engine::BlockClass;
using stof::engine::BlockLayout;
using stof::engine::LayoutExportFormat;
using stof::engine::Mask;

namespace {

// 48 x 40 at 16 x 16: 3 x 3 blocks (last column ragged: 8 columns). Block (0, 0) full,
// (1, 2) full over its 8 in-range columns, (2, 1) part.
BlockLayout Sample() {
  auto m = Mask::Create(48, 40);
  EXPECT_TRUE(m.IsOk());
  m->SetRect(0, 16, 0, 16);
  m->SetRect(16, 32, 32, 40);
  m->Set(40, 20);
  return std::move(BlockLayout::Build(*m, 16, 16)).Value();
}

TEST(LayoutExport, ClassMatrix) {
  const auto cls = stof::engine::BlockClassMatrix(Sample());
  const uint8_t F = static_cast<uint8_t>(BlockClass::kFull), P = static_cast<uint8_t>(BlockClass::kPart);
  EXPECT_EQ(cls, (std::vector<uint8_t>{F, 0, 0, 0, 0, F, 0, P, 0}));
}

TEST(LayoutExport, PngDecodesToClassGrays) {
  auto png = EncodeLayout(Sample(), LayoutExportFormat::kPng);
  ASSERT_TRUE(png.IsOk()) << png.Message();
  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png->data()),
                                            static_cast<int>(png->size()), &w, &h, &n, 1);
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(w, 3);
  EXPECT_EQ(h, 3);
  const std::vector<uint8_t> got(px, px + 9);
  stbi_image_free(px);
  EXPECT_EQ(got, (std::vector<uint8_t>{255, 0, 0, 0, 0, 255, 0, 128, 0}));
}

TEST(LayoutExport, NpyHeaderAndData) {
  auto npy = EncodeLayout(Sample(), LayoutExportFormat::kNpy);
  ASSERT_TRUE(npy.IsOk());
  ASSERT_GT(npy->size(), 10u);
  EXPECT_EQ(npy->substr(0, 6), std::string("\x93NUMPY", 6));
  const size_t header_len = static_cast<unsigned char>((*npy)[8]) | (static_cast<unsigned char>((*npy)[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = npy->substr(10, header_len);
  EXPECT_NE(header.find("'descr': '|u1'"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (3, 3)"), std::string::npos) << header;
  ASSERT_EQ(npy->size(), 10 + header_len + 9);
  EXPECT_EQ(npy->substr(10 + header_len), std::string("\x02\0\0\0\0\x02\0\x01\0", 9));
}

TEST(LayoutExport, JsonFormsMatchTheLayout) {
  const BlockLayout l = Sample();
  auto json = EncodeLayout(l, LayoutExportFormat::kJson);
  auto flex = EncodeLayout(l, LayoutExportFormat::kFlex);
  ASSERT_TRUE(json.IsOk() && flex.IsOk());
  EXPECT_EQ(nlohmann::json::parse(*json), l.ToJson());
  EXPECT_EQ(nlohmann::json::parse(*flex), l.ToFlexJson());
  EXPECT_EQ(nlohmann::json::parse(*flex)["full_kv_num_blocks"], (nlohmann::json{1, 1, 0}));
}

TEST(LayoutExport, NamesAndErrors) {
  for (auto f : {LayoutExportFormat::kJson, LayoutExportFormat::kFlex, LayoutExportFormat::kPng,
                 LayoutExportFormat::kNpy}) {
    auto back = stof::engine::ParseLayoutExportFormat(LayoutExportFormatName(f));
    ASSERT_TRUE(back.IsOk());
    EXPECT_EQ(*back, f);
  }
  auto bad = stof::engine::ParseLayoutExportFormat("csv");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("'csv'"), std::string::npos);
  auto empty = EncodeLayout(BlockLayout{}, LayoutExportFormat::kPng);
  ASSERT_FALSE(empty.IsOk());
  EXPECT_NE(empty.Message().find("empty"), std::string::npos);
  auto s = SaveLayout("/nonexistent-dir/l.png", Sample(), LayoutExportFormat::kPng);
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), "/nonexistent-dir/l.png: cannot create a file in /nonexistent-dir: No such "
                         "file or directory");
}

}  // namespace
