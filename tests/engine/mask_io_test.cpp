// Tests of mask files (mask_io.h): exact PNG / NPY / JSON round trips on random masks (sizes
// that are and are not multiples of 64), NPY of every dtype, both byte orders and Fortran
// order (written by the small writer below), PNG of every channel layout, and broken inputs,
// each checked for a message that names the file and the problem. Files go to a fresh
// directory under the system temp dir, removed after each test.
#include "engine/mask/mask_io.h"

#include <gtest/gtest.h>
#include <stb_image_write.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace se = stof::engine;

se::Mask RandomMask(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto m = se::Mask::Create(rows, cols);
  const uint64_t density = rng() % 100;  // percent
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (rng() % 100 < density) m->Set(r, c);
    }
  }
  return *m;
}

// ---- A small NPY writer -------------------------------------------------------------------

std::string NpyHeaderBytes(const std::string& dict_text, int major = 1) {
  std::string dict = dict_text;
  const size_t prefix = major == 1 ? 10 : 12;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string out = std::string("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return out + dict;
}

std::string NpyDict(const std::string& descr, const std::string& shape, bool fortran) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// Little-endian bytes of `bits` truncated to n bytes; reversed for big endian.
std::string ElementBytes(uint64_t bits, size_t n, bool big_endian) {
  std::string b;
  for (size_t i = 0; i < n; ++i) b += static_cast<char>((bits >> (8 * i)) & 0xff);
  if (big_endian) std::reverse(b.begin(), b.end());
  return b;
}

// One test element: its raw bits and whether it is non-zero.
struct Elem {
  uint64_t bits;
  bool nonzero;
};

uint64_t DoubleBits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}
uint64_t FloatBits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// Values that catch wrong widths (high byte only), signs and -0.0.
std::vector<Elem> ElementsFor(char kind, size_t size) {
  const uint64_t high_byte_only = uint64_t{1} << (8 * (size - 1));
  if (kind == 'b') return {{0, false}, {1, true}};
  if (kind == 'u' || kind == 'i') {
    return {{0, false}, {1, true}, {high_byte_only, true}, {~uint64_t{0}, true}, {0x80, true}};
  }
  if (size == 2) {  // half: 0, -0, 1.0, smallest denormal, -1.0, NaN
    return {{0x0000, false}, {0x8000, false}, {0x3c00, true}, {0x0001, true}, {0xbc00, true},
            {0x7e00, true}};
  }
  if (size == 4) {
    return {{FloatBits(0.0f), false}, {FloatBits(-0.0f), false}, {FloatBits(1.5f), true},
            {FloatBits(-2.0f), true}, {FloatBits(1e-40f), true}, {FloatBits(NAN), true}};
  }
  return {{DoubleBits(0.0), false}, {DoubleBits(-0.0), false}, {DoubleBits(1.5), true},
          {DoubleBits(-2.0), true}, {DoubleBits(1e-310), true}, {DoubleBits(NAN), true}};
}

// A rows x cols array of `descr` whose element (r, c) is elems[(r * 7 + c * 3) % n], and the
// mask it must decode to.
std::pair<std::string, se::Mask> MakeNpy(const std::string& descr, int64_t rows, int64_t cols,
                                         bool fortran, int major = 1) {
  const bool big = descr[0] == '>';
  const size_t size = static_cast<size_t>(descr[2] - '0');
  const std::vector<Elem> elems = ElementsFor(descr[1], size);
  auto expected = se::Mask::Create(rows, cols);
  auto at = [&](int64_t r, int64_t c) { return elems[static_cast<size_t>(r * 7 + c * 3) % elems.size()]; };
  std::string data;
  const int64_t outer = fortran ? cols : rows, inner = fortran ? rows : cols;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t r = fortran ? i : o, c = fortran ? o : i;
      data += ElementBytes(at(r, c).bits, size, big);
      if (at(r, c).nonzero) expected->Set(r, c);
    }
  }
  const std::string shape = "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  return {NpyHeaderBytes(NpyDict(descr, shape, fortran), major) + data, *expected};
}

// ---- A PNG writer for every channel layout -------------------------------------------------

void Append(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

std::string WritePng(int w, int h, int comp, const std::vector<unsigned char>& px) {
  std::string out;
  EXPECT_TRUE(stbi_write_png_to_func(Append, &out, w, h, comp, px.data(), w * comp));
  return out;
}

// ---- Fixture: a fresh temp dir -------------------------------------------------------------

class MaskIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    m_dir = fs::temp_directory_path() /
            ("stof_mask_io_" + std::string(info->name()) + "_" + std::to_string(stamp) + "_" +
             std::to_string(std::random_device{}()));
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  std::string Path(const std::string& name) const { return (m_dir / name).string(); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    const std::string p = Path(name);
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
  // Loads `name` (written with `bytes`) and expects an error containing the path and `problem`.
  void ExpectLoadError(const std::string& name, const std::string& bytes, const std::string& problem) {
    const std::string p = Write(name, bytes);
    ExpectPathError(p, problem);
  }
  void ExpectPathError(const std::string& p, const std::string& problem) {
    auto r = se::LoadMask(p);
    ASSERT_FALSE(r.IsOk()) << p;
    EXPECT_NE(r.Message().find(p), std::string::npos) << r.Message();
    EXPECT_NE(r.Message().find(problem), std::string::npos)
        << "got: " << r.Message() << "\nwant: " << problem;
  }

  fs::path m_dir;
};

// ---- Round trips ------------------------------------------------------------------------

TEST_F(MaskIo, FileRoundTripsAreExact) {
  uint64_t seed = 1;
  for (int64_t L : {1, 7, 63, 64, 65, 100, 130, 257}) {
    const se::Mask m = RandomMask(L, L, seed++);
    for (const char* ext : {".png", ".npy", ".json"}) {
      std::string name = "m";  // appends, not "m" + ...: GCC 12 -Wrestrict false positive
      name += std::to_string(L);
      name += ext;
      const std::string p = Path(name);
      ASSERT_TRUE(se::SaveMask(p, m).IsOk()) << p;
      auto back = se::LoadMask(p);
      ASSERT_TRUE(back.IsOk()) << back.Message();
      EXPECT_EQ(back->mask, m) << p;
      EXPECT_FALSE(back->has_spec);
    }
  }
}

// A file is only written where LoadMask reads it back: a non-square mask is refused, naming the
// shape, and no file appears.
TEST_F(MaskIo, SaveRefusesANonSquareMask) {
  const se::Mask m = RandomMask(3, 10, 5);
  for (const char* ext : {".png", ".npy", ".json"}) {
    const std::string p = Path(std::string("rect") + ext);
    auto s = se::SaveMask(p, m);
    ASSERT_FALSE(s.IsOk()) << p;
    EXPECT_NE(s.Message().find("mask files hold square L x L masks, got 3 x 10"),
              std::string::npos)
        << s.Message();
    EXPECT_FALSE(se::LoadMask(p).IsOk()) << "nothing written at " << p;
  }
}

TEST_F(MaskIo, InMemoryRoundTripsKeepNonSquareShapes) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 200}, {129, 5}, {64, 65}}) {
    const se::Mask m = RandomMask(rows, cols, static_cast<uint64_t>(rows * 1000 + cols));
    auto png = se::EncodePng(m);
    ASSERT_TRUE(png.IsOk());
    auto from_png = se::DecodePng(*png, "m.png");
    ASSERT_TRUE(from_png.IsOk()) << from_png.Message();
    EXPECT_EQ(*from_png, m);
    auto from_npy = se::DecodeNpy(se::EncodeNpy(m), "m.npy");
    ASSERT_TRUE(from_npy.IsOk()) << from_npy.Message();
    EXPECT_EQ(*from_npy, m);
  }
}

TEST_F(MaskIo, JsonSpecRoundTripRegenerates) {
  se::MaskSpec spec;
  spec.pattern = "bigbird";
  spec.seq_len = 300;
  spec.seed = 9;
  auto m = se::Generate(spec);
  ASSERT_TRUE(m.IsOk());
  const std::string p = Path("bb.json");
  ASSERT_TRUE(se::SaveMask(p, *m, &spec).IsOk());
  auto back = se::LoadMask(p);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_TRUE(back->has_spec);
  EXPECT_EQ(back->spec, spec);
  EXPECT_EQ(back->mask, *m);

  // A spec that does not produce the mask is refused rather than saved.
  spec.seed = 10;
  auto bad = se::SaveMask(Path("bad.json"), *m, &spec);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("does not regenerate the mask"), std::string::npos) << bad.Message();
}

// A spec past a dense mask's 32768 (up to 2^20, where row runs reach): LoadMaskSpec reads it
// without generating; LoadMask refuses it naming the commands that take it; a bits file or
// another format is not a spec.
TEST_F(MaskIo, LongJsonSpecsLoadAsSpecsOnly) {
  const std::string long_spec = Write(
      "long.json", R"({"format": "stof-mask", "version": 1, "spec": {"pattern": "or",
        "seq_len": 131072, "operands": [{"pattern": "sliding_window", "width": 256},
        {"pattern": "global", "global": 64}]}})");
  auto spec = se::LoadMaskSpec(long_spec);
  ASSERT_TRUE(spec.IsOk()) << spec.Message();
  EXPECT_EQ(spec->pattern, "or");
  EXPECT_EQ(spec->seq_len, 131072);
  ASSERT_EQ(spec->operands.size(), 2u);
  EXPECT_EQ(spec->operands[1].global, 64);
  EXPECT_EQ(se::LoadMask(long_spec).Message(),
            long_spec + ": spec: seq_len 131072 is past a dense mask's 32768 (stof mask and stof "
                        "layout take it as row runs; select, bench mha and profile mha its last "
                        "rows with --q-len)");
  const std::string runs = Write(
      "runs.json", R"({"format": "stof-mask", "version": 1, "runs": {"rows": 2, "cols": 2,
        "runs": [[0, 1], [0, 2]]}})");
  EXPECT_EQ(se::LoadMaskSpec(runs).Message(),
            runs + ": holds the mask's bits (\"runs\"), not a generator spec");
  EXPECT_EQ(se::LoadMaskSpec(Path("m.npy")).Message(),
            Path("m.npy") + ": a generator spec is a .json mask file");
  const std::string too_long = Write(
      "too_long.json",
      R"({"format": "stof-mask", "version": 1, "spec": {"pattern": "causal", "seq_len": 1048577}})");
  EXPECT_EQ(se::LoadMaskSpec(too_long).Message(),
            too_long + ": spec.seq_len: expected an integer <= 1048576, got 1048577");
}

TEST_F(MaskIo, SavedNpyIsStandardBoolCOrder) {
  const se::Mask m = RandomMask(5, 5, 3);
  const std::string bytes = se::EncodeNpy(m);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(bytes.find("'descr': '|b1', 'fortran_order': False, 'shape': (5, 5)"), std::string::npos);
  EXPECT_EQ(bytes.size() % 64, 25u % 64);  // header padded to 64, then 25 one-byte elements
  EXPECT_EQ(bytes[bytes.size() - 25 - 1], '\n');
}

// ---- NPY dtypes and orders -----------------------------------------------------------------

TEST_F(MaskIo, NpyEveryDtypeBothOrdersAndByteOrders) {
  const std::vector<std::string> descrs = {
      "|b1", "|u1", "|i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f2", "<f4", "<f8",
      ">u2", ">i4", ">i8", ">f2", ">f4", ">f8", "=f8", "<b1", "|u1"};
  for (const std::string& d : descrs) {
    for (bool fortran : {false, true}) {
      auto [bytes, expected] = MakeNpy(d, 6, 11, fortran);
      auto m = se::DecodeNpy(bytes, "t.npy");
      ASSERT_TRUE(m.IsOk()) << d << ": " << m.Message();
      EXPECT_EQ(*m, expected) << d << (fortran ? " F" : " C");
      EXPECT_GT(expected.Count(), 0) << d;
      EXPECT_LT(expected.Count(), 66) << d;
    }
  }
}

TEST_F(MaskIo, NpyVersions2And3AndFileLoad) {
  for (int major : {2, 3}) {
    auto [bytes, expected] = MakeNpy("<f4", 9, 9, false, major);
    auto m = se::DecodeNpy(bytes, "v.npy");
    ASSERT_TRUE(m.IsOk()) << m.Message();
    EXPECT_EQ(*m, expected);
  }
  auto [bytes, expected] = MakeNpy("<f8", 70, 70, true);
  auto loaded = se::LoadMask(Write("f.npy", bytes));
  ASSERT_TRUE(loaded.IsOk()) << loaded.Message();
  EXPECT_EQ(loaded->mask, expected);
}

// ---- PNG channel layouts ---------------------------------------------------------------

TEST_F(MaskIo, PngChannelLayoutsIgnoreAlpha) {
  // 3 x 2 pixels: gray / gray+alpha / RGB / RGBA, attend where any colour channel != 0.
  const std::vector<bool> want = {false, true, true, false, true, true};
  struct Case {
    int comp;
    std::vector<unsigned char> px;
  } cases[] = {
      {1, {0, 1, 255, 0, 7, 128}},
      {2, {0, 255, 1, 0, 255, 255, 0, 0, 9, 0, 3, 128}},
      {3, {0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 9, 0, 1, 1, 1}},
      {4, {0, 0, 0, 255, 0, 0, 1, 0, 5, 0, 0, 255, 0, 0, 0, 0, 0, 3, 0, 0, 9, 9, 9, 9}},
  };
  for (const Case& c : cases) {
    auto m = se::DecodePng(WritePng(3, 2, c.comp, c.px), "p.png");
    ASSERT_TRUE(m.IsOk()) << m.Message();
    ASSERT_EQ(m->Rows(), 2);
    ASSERT_EQ(m->Cols(), 3);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(m->Get(i / 3, i % 3), want[static_cast<size_t>(i)]) << c.comp << " " << i;
  }
}

// A 3 x 3 16-bit gray PNG with values {0, 1, 0 / 256, 0, 0 / 0, 0, 65535} (written by a few
// lines of Python with zlib; stb cannot write 16-bit). 1 must attend: an 8-bit conversion
// (value >> 8) would lose it.
TEST_F(MaskIo, Png16BitKeepsSmallValues) {
  const unsigned char kPng[] = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
      0x52, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x03, 0x10, 0x00, 0x00, 0x00, 0x00, 0x23,
      0xd3, 0x36, 0x20, 0x00, 0x00, 0x00, 0x12, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60,
      0x60, 0x60, 0x60, 0x84, 0x62, 0x28, 0xf8, 0xff, 0x1f, 0x00, 0x03, 0x30, 0x02, 0x01, 0xc7,
      0x4a, 0xc2, 0x54, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  auto m = se::DecodePng(std::string(reinterpret_cast<const char*>(kPng), sizeof kPng), "g16.png");
  ASSERT_TRUE(m.IsOk()) << m.Message();
  auto want = se::Mask::Create(3, 3);
  want->Set(0, 1);
  want->Set(1, 0);
  want->Set(2, 2);
  EXPECT_EQ(*m, *want);
}

// ---- Broken inputs -----------------------------------------------------------------------

TEST_F(MaskIo, BrokenNpyFilesNameFileAndProblem) {
  auto [good, unused] = MakeNpy("<i4", 8, 8, false);
  (void)unused;
  ExpectLoadError("empty.npy", "", "the file is empty");
  ExpectLoadError("short_magic.npy", "\x93NUM", "header: truncated");
  ExpectLoadError("trunc_header.npy", good.substr(0, 30), "header: truncated");
  ExpectLoadError("trunc_data.npy", good.substr(0, good.size() - 3), "data: truncated");
  ExpectLoadError("trailing.npy", good + "xx", "2 unexpected bytes after the data");
  ExpectLoadError("magic.npy", "PK\x03\x04 this is a zip", "not an NPY file: bad magic");
  std::string bad_version = good;
  bad_version[6] = 4;
  ExpectLoadError("version.npy", bad_version, "unsupported NPY version 4.0");
  ExpectLoadError("3d.npy", NpyHeaderBytes(NpyDict("<f4", "(2, 2, 2)", false)) + std::string(32, '\0'),
                  "shape: expected 2 dimensions, got 3");
  ExpectLoadError("1d.npy", NpyHeaderBytes(NpyDict("<f4", "(4,)", false)) + std::string(16, '\0'),
                  "shape: expected 2 dimensions, got 1");
  ExpectLoadError("nonsquare.npy", MakeNpy("|b1", 3, 5, false).first, "not square: 3 x 5");
  // Declared far beyond kMaxLen and with no data: refused on the header alone.
  ExpectLoadError("huge.npy", NpyHeaderBytes(NpyDict("<f8", "(40000, 40000)", false)),
                  "shape: size 40000 x 40000 is too large");
  ExpectLoadError("zero.npy", NpyHeaderBytes(NpyDict("<f8", "(0, 4)", false)), "is empty");
  ExpectLoadError("complex.npy", NpyHeaderBytes(NpyDict("<c8", "(2, 2)", false)) + std::string(32, '\0'),
                  "unsupported dtype '<c8'");
  ExpectLoadError("object.npy", NpyHeaderBytes(NpyDict("|O", "(2, 2)", false)), "unsupported dtype '|O'");
  ExpectLoadError("nokey.npy", NpyHeaderBytes("{'descr': '<f8', 'shape': (2, 2), }") + std::string(32, '\0'),
                  "missing 'fortran_order'");
  ExpectLoadError("garbled.npy", NpyHeaderBytes("{'descr' '<f8'}"), "header: expected ':'");
  ExpectLoadError("negative.npy", NpyHeaderBytes(NpyDict("<f8", "(-2, 2)", false)),
                  "shape: expected a non-negative integer");
}

TEST_F(MaskIo, BrokenPngFilesNameFileAndProblem) {
  ExpectLoadError("empty.png", "", "not a PNG: the file is empty");
  ExpectLoadError("garbage.png", "definitely not an image", "not a PNG: missing the PNG signature");
  auto png = se::EncodePng(RandomMask(40, 40, 5));
  ASSERT_TRUE(png.IsOk());
  ExpectLoadError("trunc.png", png->substr(0, png->size() / 2), "PNG: decode failed");
  ExpectLoadError("sig_only.png", png->substr(0, 8), "PNG: cannot read the header");
  ExpectLoadError("nonsquare.png", WritePng(3, 2, 1, {1, 1, 1, 1, 1, 1}), "not square: 2 x 3");
}

// A PNG's signature and IHDR (no image data: the size alone must decide) for `w` x `h` pixels
// of `colour` type at `depth` bits.
std::string PngHeader(uint32_t w, uint32_t h, int depth, int colour) {
  std::string s("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16);
  for (uint32_t v : {w, h})
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
  s += static_cast<char>(depth);
  s += static_cast<char>(colour);
  s += std::string(3, '\0');      // compression, filter, interlace
  s += std::string("\0\0\0\0", 4);  // CRC (stb does not check it)
  return s + std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12);
}

// stb decodes at most 2^30 bytes of samples; a legal 20000 x 20000 RGB mask used to fail with
// stb's "unknown image type". Now the size and the limit are named, before any decoding.
TEST_F(MaskIo, PngOverTheDecodeLimitNamesTheSizeAndTheLimit) {
  ExpectLoadError("rgb.png", PngHeader(20000, 20000, 8, 2),
                  "PNG of 20000 x 20000 pixels, RGB, 8-bit: 1.12 GiB of samples, over the PNG "
                  "decoder's limit of 1 GiB");
  ExpectLoadError("rgba.png", PngHeader(16385, 16385, 8, 6), "RGBA, 8-bit: 1.00 GiB of samples");
  ExpectLoadError("gray16.png", PngHeader(30000, 30000, 16, 0), "grayscale, 16-bit: 1.68 GiB");
  ExpectLoadError("palette.png", PngHeader(20000, 20000, 8, 3), "palette, 8-bit");
  // At the limit the size passes and stb goes on to the (missing) pixels.
  ExpectLoadError("rgb_at_limit.png", PngHeader(18918, 18918, 8, 2), "PNG: decode failed");
  ExpectLoadError("gray_at_limit.png", PngHeader(32768, 32768, 8, 0), "PNG: decode failed");
  // Beyond L = 32768 the mask's own limit speaks first.
  ExpectLoadError("wide.png", PngHeader(40000, 40000, 8, 0), "40000 x 40000");
  auto r = se::LoadMask(Write("rgb2.png", PngHeader(20000, 20000, 8, 2)));
  ASSERT_FALSE(r.IsOk());
  EXPECT_NE(r.Message().find("save the mask as an 8-bit grayscale PNG or as .npy"), std::string::npos)
      << r.Message();
}

TEST_F(MaskIo, BrokenJsonFilesNameFileAndProblem) {
  ExpectLoadError("syntax.json", "{\"format\": ", "not valid JSON");
  ExpectLoadError("deep.json",
                  R"({"format": "stof-mask", "version": 1, "spec": {"pattern": "causal", "seq_len": )" +
                      std::string(60000, '[') + std::string(60000, ']') + "}}",
                  "deep.json: JSON nested deeper than 256 levels at spec.seq_len[0][0]");
  // A quoted value is bounded (json_io.h JsonForMessage): 200 bytes and "...".
  ExpectLoadError("bigformat.json", R"({"format": ")" + std::string(5000, 'x') + R"(", "version": 1, "runs": {}})",
                  "format: expected \"stof-mask\", got \"" + std::string(195, 'x') + "...\"");
  ExpectLoadError("array.json", "[1, 2]", "expected a JSON object");
  ExpectLoadError("format.json", R"({"format": "png", "version": 1, "runs": {}})",
                  "format: expected \"stof-mask\", got \"png\"");
  ExpectLoadError("version.json", R"({"format": "stof-mask", "version": 2, "runs": {}})",
                  "version: expected 1, got 2");
  ExpectLoadError("neither.json", R"({"format": "stof-mask", "version": 1})",
                  "expected exactly one of \"spec\" and \"runs\", got neither");
  ExpectLoadError("both.json", R"({"format": "stof-mask", "version": 1, "spec": {}, "runs": {}})",
                  "got both");
  ExpectLoadError("extra.json", R"({"format": "stof-mask", "version": 1, "runs": {}, "x": 1})",
                  "x: unknown key");
  ExpectLoadError("width.json",
                  R"({"format": "stof-mask", "version": 1,
                      "spec": {"pattern": "sliding_window", "seq_len": 64, "width": 0}})",
                  "mask.width: must be in 1..64, got 0");
  ExpectLoadError("runs.json",
                  R"({"format": "stof-mask", "version": 1,
                      "runs": {"rows": 2, "cols": 3, "runs": [[0, 1], [2, 1]]}})",
                  "not square: 2 x 3");
  // In memory the run-length form may be non-square.
  auto ok = se::DecodeJsonMask(R"({"format": "stof-mask", "version": 1,
                               "runs": {"rows": 2, "cols": 3, "runs": [[0, 1], [1, 2]]}})",
                               "mem.json");
  ASSERT_TRUE(ok.IsOk()) << ok.Message();
  EXPECT_EQ(ok->mask.Count(), 3);
}

TEST_F(MaskIo, FileSystemErrorsNameTheFile) {
  ExpectPathError(Path("missing.npy"), "cannot open: no such file");
  ExpectPathError(Path("missing.png"), "cannot open: no such file");
  fs::create_directories(Path("dir.json"));
  ExpectPathError(Path("dir.json"), "is a directory");
  // A missing file is missing whatever its name; an existing one is judged by its extension.
  ExpectPathError(Path("mask.bmp"), "cannot open: no such file");
  ExpectPathError(Path("bigbird"), "cannot open: no such file");
  ExpectLoadError("mask.bmp", "BM", "unknown mask format '.bmp'; expected .png, .npy or .json");
  ExpectLoadError("noext", "x", "no file extension; expected .png, .npy or .json");

  const se::Mask m = RandomMask(4, 4, 1);
  auto s = se::SaveMask(Path("no/such/dir/m.png"), m);
  ASSERT_FALSE(s.IsOk());
  EXPECT_EQ(s.Message(), Path("no/such/dir/m.png") + ": cannot create a file in " + Path("no/such/dir") +
                             ": No such file or directory");
  auto empty = se::SaveMask(Path("e.npy"), se::Mask());
  ASSERT_FALSE(empty.IsOk());
  EXPECT_NE(empty.Message().find("empty"), std::string::npos) << empty.Message();
}

}  // namespace
