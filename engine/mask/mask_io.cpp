// Mask files: PNG (stb), NPY (own header parser, streamed data) and JSON (mask_json.h inside a
// {"format": "stof-mask", "version": 1, ...} wrapper). Called by the CLI, the GUI's open/save
// and plans that reference a mask file. Invariants: every failure is an Error naming the file
// and the problem; sizes are checked against Mask::kMaxLen before anything is allocated; an NPY
// file's size is checked against its header before its data is read, and the data is streamed
// a row (or column) at a time, so an 8 GiB f8 file never sits in memory.
// Cost (BigBird L = 32768, one AMD EPYC core, 2026-11-21): PNG write 19 s (stb's deflate) /
// read 3 s; NPY write 4 s (1 GiB) / read 0.6 s; JSON runs write 0.2 s / read 0.35 s.
#include "engine/mask/mask_io.h"

#include <stb_image.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string_view>

#include "engine/core/atomic_file.h"
#include "engine/core/byte_files.h"
#include "engine/core/json_io.h"
#include "engine/mask/mask_json.h"

namespace stof::engine {

namespace {

namespace fs = std::filesystem;

// PNG and JSON files are read whole; stb takes an int length, so 2 GiB is the hard ceiling.
constexpr uint64_t kMaxWholeFileBytes = INT_MAX;
// NumPy itself refuses headers above 10000 bytes by default; 64 KiB leaves room and still
// bounds what a hostile header can make us read.
constexpr uint64_t kMaxNpyHeaderBytes = 65536;
constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
constexpr const char* kJsonFormat = "stof-mask";
constexpr int kJsonVersion = 1;

std::string Str(uint64_t v) { return std::to_string(v); }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ---- Files ------------------------------------------------------------------------------

// Size of a readable regular file, or an error naming it ("no such file", "is a directory").
Expected<uint64_t> RegularFileSize(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return MakeError(path + ": cannot open: no such file");
  if (fs::is_directory(st)) return MakeError(path + ": cannot open: is a directory, not a file");
  if (!fs::is_regular_file(st)) return MakeError(path + ": cannot open: not a regular file");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return MakeError(path + ": cannot read its size: " + ec.message());
  return static_cast<uint64_t>(size);
}

Expected<std::ifstream> OpenForRead(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return MakeError(path + ": cannot open: " + std::strerror(errno));
  return f;
}

Expected<std::string> ReadWholeFile(const std::string& path) {
  auto size = RegularFileSize(path);
  if (!size.IsOk()) return size.ToStatus();
  if (*size > kMaxWholeFileBytes) {
    return MakeError(path + ": file is " + Str(*size) + " bytes; the limit is " +
                     Str(kMaxWholeFileBytes));
  }
  auto f = OpenForRead(path);
  if (!f.IsOk()) return f.ToStatus();
  std::string bytes(static_cast<size_t>(*size), '\0');
  f->read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<uint64_t>(f->gcount()) != *size) {
    return MakeError(path + ": read failed after " + Str(static_cast<uint64_t>(f->gcount())) +
                     " of " + Str(*size) + " bytes");
  }
  return bytes;
}

// ---- NPY header -------------------------------------------------------------------------

struct NpyHeader {
  std::string descr;
  bool fortran = false;
  int64_t rows = 0, cols = 0;
  size_t item_size = 0;
  bool is_float = false;
  bool big_endian = false;
  uint64_t data_offset = 0;  // magic + version + length field + header text

  uint64_t DataBytes() const {
    return static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) * item_size;
  }
  std::string Shape() const {
    std::string s = "(";  // built by appends: GCC 12 warns (-Wrestrict) on "(" + to_string
    s += std::to_string(rows);
    s += ", ";
    s += std::to_string(cols);
    s += ")";
    return s;
  }
};

// A parser for the Python dict literal of an NPY header: {'descr': '<f8', 'fortran_order':
// False, 'shape': (3, 4), }. Only strings, True/False and tuples of non-negative ints occur.
class NpyDictParser {
 public:
  NpyDictParser(std::string_view text, std::string where)
      : m_text(text), m_where(std::move(where)) {}

  Status Parse(NpyHeader& h, std::vector<int64_t>& shape) {
    bool has_descr = false, has_fortran = false, has_shape = false;
    STOF_RETURN_IF_ERROR(Expect('{'));
    for (;;) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key;
      STOF_RETURN_IF_ERROR(ParseString(key));
      STOF_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr") {
        STOF_RETURN_IF_ERROR(ParseString(h.descr));
        has_descr = true;
      } else if (key == "fortran_order") {
        STOF_RETURN_IF_ERROR(ParseBool(h.fortran));
        has_fortran = true;
      } else if (key == "shape") {
        STOF_RETURN_IF_ERROR(ParseTuple(shape));
        has_shape = true;
      } else {
        return Fail("unexpected key '" + TextForMessage(key) + "' (expected descr, fortran_order, shape)");
      }
      SkipSpace();
      if (Peek() == ',') ++m_pos;
    }
    if (!has_descr) return Fail("missing 'descr'");
    if (!has_fortran) return Fail("missing 'fortran_order'");
    if (!has_shape) return Fail("missing 'shape'");
    return Status::Ok();
  }

 private:
  char Peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
  void SkipSpace() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
  }
  Status Fail(const std::string& what) const {
    return MakeError(m_where + what + " (at byte " + std::to_string(m_pos) + " of the header)");
  }
  Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Fail(std::string("expected '") + c + "'");
    ++m_pos;
    return Status::Ok();
  }
  Status ParseString(std::string& out) {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Fail("expected a quoted string");
    const size_t end = m_text.find(quote, m_pos + 1);
    if (end == std::string_view::npos) return Fail("unterminated string");
    out = std::string(m_text.substr(m_pos + 1, end - m_pos - 1));
    m_pos = end + 1;
    return Status::Ok();
  }
  Status ParseBool(bool& out) {
    SkipSpace();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const size_t n = std::strlen(word);
      if (m_text.substr(m_pos, n) == word) {
        m_pos += n;
        out = value;
        return Status::Ok();
      }
    }
    return Fail("fortran_order: expected True or False");
  }
  Status ParseTuple(std::vector<int64_t>& out) {
    STOF_RETURN_IF_ERROR(Expect('('));
    for (;;) {
      SkipSpace();
      if (Peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) {
        return Fail("shape: expected a non-negative integer");
      }
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        if (v > (INT64_MAX - 9) / 10) return Fail("shape: dimension too large");
        v = v * 10 + (m_text[m_pos++] - '0');
      }
      out.push_back(v);
      SkipSpace();
      if (Peek() == ',') {
        ++m_pos;
      } else if (Peek() != ')') {
        return Fail("shape: expected ',' or ')'");
      }
    }
    ++m_pos;
    return Status::Ok();
  }

  std::string_view m_text;
  std::string m_where;
  size_t m_pos = 0;
};

// Fills item_size / is_float / big_endian from descr ('|b1', '<i4', '>f8', ...).
Status ParseDescr(NpyHeader& h, const std::string& name) {
  const std::string& d = h.descr;
  auto unsupported = [&] {
    return MakeError(name + ": descr: unsupported dtype '" + TextForMessage(d) +
                     "'; expected bool, (u)int8..64 or float16/32/64 ('|b1', '|u1', '<i4', "
                     "'<f8', ...)");
  };
  if (d.size() != 3 || std::string("<>|=").find(d[0]) == std::string::npos) return unsupported();
  const char kind = d[1];
  const int size = d[2] - '0';
  const bool ok = (kind == 'b' && size == 1) ||
                  ((kind == 'u' || kind == 'i') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                  (kind == 'f' && (size == 2 || size == 4 || size == 8));
  if (!ok) return unsupported();
  h.item_size = static_cast<size_t>(size);
  h.is_float = kind == 'f';
  h.big_endian = d[0] == '>' || (d[0] == '=' && std::endian::native == std::endian::big);
  return Status::Ok();
}

uint32_t ReadLittleEndian(std::string_view bytes, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}

// Parses the header from the file's first bytes; `file_size` is the whole file's size (the
// data's size is checked against it here, before anything is allocated for the data).
Expected<NpyHeader> ParseNpyHeader(std::string_view prefix, uint64_t file_size,
                                   const std::string& name) {
  if (file_size == 0) return MakeError(name + ": not an NPY file: the file is empty");
  const size_t magic_len = sizeof(kNpyMagic) - 1;
  const std::string_view magic(kNpyMagic, magic_len);
  if (prefix.size() < magic_len && magic.substr(0, prefix.size()) == prefix) {
    return MakeError(name + ": header: truncated (the file is only " + Str(prefix.size()) +
                     " bytes)");
  }
  if (prefix.substr(0, magic_len) != magic) {
    return MakeError(name + ": not an NPY file: bad magic (expected \\x93NUMPY)");
  }
  if (prefix.size() < magic_len + 2) return MakeError(name + ": header: truncated (no version)");
  const int major = static_cast<unsigned char>(prefix[6]);
  const int minor = static_cast<unsigned char>(prefix[7]);
  if (major < 1 || major > 3) {
    return MakeError(name + ": header: unsupported NPY version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (prefix.size() < 8 + len_bytes) return MakeError(name + ": header: truncated (no length)");
  const uint64_t header_len = ReadLittleEndian(prefix, 8, len_bytes);
  if (header_len > kMaxNpyHeaderBytes) {
    return MakeError(name + ": header: length " + Str(header_len) + " exceeds the limit of " +
                     Str(kMaxNpyHeaderBytes) + " bytes");
  }
  NpyHeader h;
  h.data_offset = 8 + len_bytes + header_len;
  if (file_size < h.data_offset || prefix.size() < h.data_offset) {
    return MakeError(name + ": header: truncated (declares " + Str(header_len) +
                     " bytes, the file has " + Str(file_size) + " in all)");
  }
  std::vector<int64_t> shape;
  NpyDictParser parser(prefix.substr(8 + len_bytes, header_len), name + ": header: ");
  STOF_RETURN_IF_ERROR(parser.Parse(h, shape));
  STOF_RETURN_IF_ERROR(ParseDescr(h, name));
  if (shape.size() != 2) {
    return MakeError(name + ": shape: expected 2 dimensions, got " + std::to_string(shape.size()));
  }
  h.rows = shape[0];
  h.cols = shape[1];
  STOF_RETURN_IF_ERROR(Mask::CheckSize(h.rows, h.cols, name + ": shape"));
  const uint64_t needed = h.data_offset + h.DataBytes();
  if (file_size < needed) {
    return MakeError(name + ": data: truncated: shape " + h.Shape() + " of '" + h.descr +
                     "' needs " + Str(h.DataBytes()) + " bytes, the file has " +
                     Str(file_size - h.data_offset) + " after the header");
  }
  if (file_size > needed) {
    return MakeError(name + ": data: " + Str(file_size - needed) +
                     " unexpected bytes after the data of shape " + h.Shape() + " of '" +
                     h.descr + "'");
  }
  return h;
}

// ---- NPY data ---------------------------------------------------------------------------

// Reads exactly n bytes into dst; false on a short read.
using ByteSource = std::function<bool(char* dst, size_t n)>;

// Element != 0 from its bytes: any set bit, except a float's sign bit (so -0.0 is 0).
class NonZeroTest {
 public:
  explicit NonZeroTest(const NpyHeader& h) : m_size(h.item_size) {
    std::fill(m_keep, m_keep + 8, 0xff);
    if (h.is_float) m_keep[h.big_endian ? 0 : m_size - 1] = 0x7f;
  }
  bool operator()(const unsigned char* p) const {
    unsigned char any = 0;
    for (size_t k = 0; k < m_size; ++k) any |= p[k] & m_keep[k];
    return any != 0;
  }

 private:
  size_t m_size;
  unsigned char m_keep[8];
};

bool AllZero(const unsigned char* p, size_t n) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    if (v != 0) return false;
  }
  return true;
}

// Streams the data one line at a time (a row in C order, a column in Fortran order).
Expected<Mask> DecodeNpyData(const NpyHeader& h, const ByteSource& read, const std::string& name) {
  auto mask = Mask::Create(h.rows, h.cols, name);
  if (!mask.IsOk()) return mask;
  const NonZeroTest nonzero(h);
  const int64_t lines = h.fortran ? h.cols : h.rows;
  const int64_t per_line = h.fortran ? h.rows : h.cols;
  std::vector<unsigned char> buf(static_cast<size_t>(per_line) * h.item_size);
  for (int64_t line = 0; line < lines; ++line) {
    if (!read(reinterpret_cast<char*>(buf.data()), buf.size())) {
      return MakeError(name + ": data: read failed at line " + std::to_string(line));
    }
    for (int64_t k = 0; k < per_line; ++k) {
      const unsigned char* p = buf.data() + static_cast<size_t>(k) * h.item_size;
      if (k % 8 == 0 && k + 8 <= per_line && AllZero(p, 8 * h.item_size)) {
        k += 7;  // eight zero elements at once: sparse masks decode several times faster
        continue;
      }
      if (!nonzero(p)) continue;
      if (h.fortran) {
        mask->Set(k, line);
      } else {
        mask->Set(line, k);
      }
    }
  }
  return mask;
}

Expected<Mask> LoadNpyFile(const std::string& path) {
  auto size = RegularFileSize(path);
  if (!size.IsOk()) return size.ToStatus();
  auto f = OpenForRead(path);
  if (!f.IsOk()) return f.ToStatus();
  std::string prefix(static_cast<size_t>(std::min<uint64_t>(*size, 12 + kMaxNpyHeaderBytes)), '\0');
  f->read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  prefix.resize(static_cast<size_t>(f->gcount()));
  auto header = ParseNpyHeader(prefix, *size, path);
  if (!header.IsOk()) return header.ToStatus();
  f->clear();
  f->seekg(static_cast<std::streamoff>(header->data_offset));
  std::ifstream& in = *f;
  return DecodeNpyData(*header, [&in](char* dst, size_t n) {
    in.read(dst, static_cast<std::streamsize>(n));
    return static_cast<size_t>(in.gcount()) == n;
  }, path);
}

// ---- PNG --------------------------------------------------------------------------------

bool HasPngSignature(const std::string& bytes) {
  return bytes.size() >= sizeof kPngSignature &&
         std::memcmp(bytes.data(), kPngSignature, sizeof kPngSignature) == 0;
}

// stb decodes at most 2^30 bytes of samples (its check: width x height x channels <= 2^30 at
// the IHDR; 16-bit samples then need twice that in an int-sized buffer), and past it says only
// "unknown image type" or "too large". We read the IHDR ourselves and refuse such an image
// with its size and our limit: width x height x channels x bytes per sample <= 2^30 (1 GiB),
// palette images counted as 4 channels as stb does. That is L = 32768 in 8-bit grayscale,
// 18918 in RGB, 16384 in RGBA, 23170 in 16-bit grayscale. A file too short for an IHDR is
// left to stb, which names what is wrong with it.
constexpr uint64_t kMaxPngDecodeBytes = uint64_t{1} << 30;

Status CheckPngDecodeSize(const std::string& bytes, const std::string& name) {
  // Signature (8), then the IHDR chunk: length 13, "IHDR", width, height, bit depth, colour.
  if (bytes.size() < 8 + 8 + 13 || bytes.compare(12, 4, "IHDR") != 0) return Status::Ok();
  const auto u32 = [&](size_t at) {
    uint64_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  const uint64_t width = u32(16), height = u32(20);
  const int depth = static_cast<unsigned char>(bytes[24]);
  const int colour = static_cast<unsigned char>(bytes[25]);
  struct Kind {
    int colour;
    uint64_t channels;
    const char* name;
  };
  static constexpr Kind kKinds[] = {{0, 1, "grayscale"}, {2, 3, "RGB"}, {3, 4, "palette"},
                                    {4, 2, "grayscale + alpha"}, {6, 4, "RGBA"}};
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds)
    if (k.colour == colour) kind = &k;
  if (kind == nullptr || width == 0 || height == 0) return Status::Ok();  // stb says why
  if (width > static_cast<uint64_t>(Mask::kMaxLen) || height > static_cast<uint64_t>(Mask::kMaxLen))
    return Mask::CheckSize(static_cast<int64_t>(height), static_cast<int64_t>(width), name);
  const uint64_t sample_bytes = depth == 16 ? 2 : 1;
  const uint64_t need = width * height * kind->channels * sample_bytes;
  if (need <= kMaxPngDecodeBytes) return Status::Ok();
  char size[32];
  std::snprintf(size, sizeof size, "%.2f GiB", static_cast<double>(need) / (1 << 30));
  return MakeError(name + ": PNG of " + Str(width) + " x " + Str(height) + " pixels, " +
                   kind->name + ", " + std::to_string(depth) + "-bit: " + size +
                   " of samples, over the PNG decoder's limit of 1 GiB (width x height x "
                   "channels x bytes per sample; at most 32768 x 32768 in 8-bit grayscale, "
                   "18918 x 18918 in RGB); save the mask as an 8-bit grayscale PNG or as .npy");
}

std::string StbReason() {
  const char* r = stbi_failure_reason();
  return r ? r : "unknown error";
}

// Turns decoded pixels (8- or 16-bit, `comp` channels) into a mask: any non-zero colour
// channel attends; the alpha channel (comp 2 and 4) is ignored.
template <class T>
void PixelsToMask(const T* px, int comp, Mask& m) {
  const int colour = (comp == 2 || comp == 4) ? comp - 1 : comp;
  for (int64_t r = 0; r < m.Rows(); ++r) {
    uint64_t* words = m.RowWords(r);
    for (int64_t c = 0; c < m.Cols(); ++c) {
      const T* p = px + (r * m.Cols() + c) * comp;
      bool on = false;
      for (int k = 0; k < colour; ++k) on = on || p[k] != 0;
      if (on) words[c >> 6] |= uint64_t{1} << (c & 63);
    }
  }
}

// Calls f(r, c) for every attended element, a word at a time (sparse masks skip fast).
template <class F>
void ForEachSet(const Mask& m, F&& f) {
  for (int64_t r = 0; r < m.Rows(); ++r) {
    const uint64_t* words = m.RowWords(r);
    for (int64_t w = 0; w < m.WordsPerRow(); ++w) {
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
        f(r, w * 64 + std::countr_zero(bits));
      }
    }
  }
}

// Row r of the mask as NPY '|b1' bytes (0 or 1) into dst[0, cols), which starts zeroed.
void NpyRowBytes(const Mask& m, int64_t r, char* dst) {
  const uint64_t* words = m.RowWords(r);
  for (int64_t w = 0; w < m.WordsPerRow(); ++w)
    for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) dst[w * 64 + std::countr_zero(bits)] = 1;
}

// The NPY file streamed through the atomic writer about 1 MiB at a time, so a 1 GiB mask
// (L = 32768) is never a 1 GiB string as EncodeNpy's would be.
Status SaveNpyFile(const std::string& path, const Mask& mask) {
  auto f = AtomicFile::Create(path);
  if (!f.IsOk()) return f.ToStatus();
  STOF_RETURN_IF_ERROR(f->Write(NpyHeaderBytes(mask.Rows(), mask.Cols(), "|b1")));
  const size_t cols = static_cast<size_t>(mask.Cols());
  const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t{1} << 20) / mask.Cols());
  std::string chunk;
  for (int64_t r0 = 0; r0 < mask.Rows(); r0 += rows_per_chunk) {
    const int64_t r1 = std::min(mask.Rows(), r0 + rows_per_chunk);
    chunk.assign(static_cast<size_t>(r1 - r0) * cols, '\0');
    for (int64_t r = r0; r < r1; ++r) NpyRowBytes(mask, r, chunk.data() + static_cast<size_t>(r - r0) * cols);
    STOF_RETURN_IF_ERROR(f->Write(chunk));
  }
  return f->Commit();
}

// ---- JSON wrapper -----------------------------------------------------------------------

Expected<LoadedMask> DecodeJsonObject(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object()) return MakeError(name + ": expected a JSON object {\"format\": \"stof-mask\", ...}");
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (k != "format" && k != "version" && k != "spec" && k != "runs") {
      return MakeError(name + ": " + k + ": unknown key (expected format, version, spec or runs)");
    }
  }
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != kJsonFormat) {
    return MakeError(name + ": format: expected \"stof-mask\"" +
                     (j.contains("format") ? ", got " + JsonForMessage(j["format"]) : ", but it is missing"));
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kJsonVersion) {
    return MakeError(name + ": version: expected 1" +
                     (j.contains("version") ? ", got " + JsonForMessage(j["version"]) : ", but it is missing"));
  }
  const bool has_spec = j.contains("spec"), has_runs = j.contains("runs");
  if (has_spec == has_runs) {
    return MakeError(name + ": expected exactly one of \"spec\" and \"runs\", got " +
                     (has_spec ? "both" : "neither"));
  }
  LoadedMask out;
  if (has_runs) {
    auto m = MaskFromRunLengthJson(j["runs"], name + ": runs");
    if (!m.IsOk()) return m.ToStatus();
    out.mask = std::move(*m);
    return out;
  }
  auto spec = MaskSpecFromJson(j["spec"], name + ": spec");
  if (!spec.IsOk()) return spec.ToStatus();
  auto m = Generate(*spec);
  if (!m.IsOk()) return MakeError(name + ": spec: " + m.Message());
  out.mask = std::move(*m);
  out.has_spec = true;
  out.spec = std::move(*spec);
  return out;
}

Expected<std::string> EncodeJsonMask(const Mask& mask, const MaskSpec* spec) {
  nlohmann::json j = nlohmann::json::object();
  j["format"] = kJsonFormat;
  j["version"] = kJsonVersion;
  if (spec == nullptr) {
    j["runs"] = MaskToRunLengthJson(mask);
    return DumpJson(j) + "\n";
  }
  // The file must regenerate `mask` exactly; refuse a spec that does not.
  auto regenerated = Generate(*spec);
  if (!regenerated.IsOk()) return MakeError("spec: " + regenerated.Message());
  if (*regenerated != mask) {
    return MakeError("spec '" + Describe(*spec) + "' does not regenerate the mask (hash " +
                     regenerated->HashHex() + " vs " + mask.HashHex() + ")");
  }
  j["spec"] = MaskSpecToJson(*spec);
  return DumpJson(j, 2) + "\n";
}

}  // namespace

Expected<MaskFormat> MaskFormatFromPath(const std::string& path) {
  const std::string ext = Lower(fs::path(path).extension().string());
  if (ext == ".png") return MaskFormat::kPng;
  if (ext == ".npy") return MaskFormat::kNpy;
  if (ext == ".json") return MaskFormat::kJson;
  if (ext.empty()) return MakeError(path + ": no file extension; expected .png, .npy or .json");
  return MakeError(path + ": unknown mask format '" + ext + "'; expected .png, .npy or .json");
}

Expected<Mask> DecodePng(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) return MakeError(name + ": not a PNG: the file is empty");
  if (!HasPngSignature(bytes)) return MakeError(name + ": not a PNG: missing the PNG signature");
  if (bytes.size() > kMaxWholeFileBytes) return MakeError(name + ": PNG: too large to decode");
  STOF_RETURN_IF_ERROR(CheckPngDecodeSize(bytes, name));
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &comp)) {
    return MakeError(name + ": PNG: cannot read the header: " + StbReason());
  }
  STOF_RETURN_IF_ERROR(Mask::CheckSize(h, w, name));  // before stb allocates the pixels
  auto mask = Mask::Create(h, w, name);
  if (!mask.IsOk()) return mask;
  // 16-bit images are decoded at 16 bits: stb's 8-bit conversion would turn 1..255 into 0.
  const bool wide = stbi_is_16_bit_from_memory(data, len) != 0;
  void* px = wide ? static_cast<void*>(stbi_load_16_from_memory(data, len, &w, &h, &comp, 0))
                  : static_cast<void*>(stbi_load_from_memory(data, len, &w, &h, &comp, 0));
  if (px == nullptr) return MakeError(name + ": PNG: decode failed: " + StbReason());
  std::unique_ptr<void, void (*)(void*)> owner(px, stbi_image_free);
  if (wide) {
    PixelsToMask(static_cast<const uint16_t*>(px), comp, *mask);
  } else {
    PixelsToMask(static_cast<const stbi_uc*>(px), comp, *mask);
  }
  return mask;
}

Expected<Mask> DecodeNpy(const std::string& bytes, const std::string& name) {
  auto header = ParseNpyHeader(bytes, bytes.size(), name);
  if (!header.IsOk()) return header.ToStatus();
  size_t pos = static_cast<size_t>(header->data_offset);
  return DecodeNpyData(*header, [&](char* dst, size_t n) {
    if (bytes.size() - pos < n) return false;
    std::memcpy(dst, bytes.data() + pos, n);
    pos += n;
    return true;
  }, name);
}

Expected<LoadedMask> DecodeJsonMask(const std::string& text, const std::string& name) {
  auto j = ParseJson(text, name);
  if (!j.IsOk()) return j.ToStatus();
  return DecodeJsonObject(*j, name);
}

Expected<std::string> EncodePng(const Mask& mask) {
  if (mask.Empty()) return MakeError("PNG: cannot encode an empty mask");
  std::vector<uint8_t> gray(static_cast<size_t>(mask.Rows() * mask.Cols()), 0);
  ForEachSet(mask, [&](int64_t r, int64_t c) { gray[static_cast<size_t>(r * mask.Cols() + c)] = 255; });
  return EncodeGrayPng(gray, mask.Rows(), mask.Cols());
}

std::string EncodeNpy(const Mask& mask) {
  std::string out = NpyHeaderBytes(mask.Rows(), mask.Cols(), "|b1");
  const size_t data_at = out.size();
  out.resize(data_at + static_cast<size_t>(mask.Rows() * mask.Cols()), '\0');
  for (int64_t r = 0; r < mask.Rows(); ++r)
    NpyRowBytes(mask, r, out.data() + data_at + static_cast<size_t>(r * mask.Cols()));
  return out;
}

Expected<LoadedMask> LoadMask(const std::string& path) {
  // A missing file is reported as missing, whatever its name says about its format.
  if (auto size = RegularFileSize(path); !size.IsOk()) return size.ToStatus();
  auto format = MaskFormatFromPath(path);
  if (!format.IsOk()) return format.ToStatus();
  LoadedMask out;
  if (*format == MaskFormat::kNpy) {
    auto m = LoadNpyFile(path);
    if (!m.IsOk()) return m.ToStatus();
    out.mask = std::move(*m);
  } else {
    auto bytes = ReadWholeFile(path);
    if (!bytes.IsOk()) return bytes.ToStatus();
    if (*format == MaskFormat::kPng) {
      auto m = DecodePng(*bytes, path);
      if (!m.IsOk()) return m.ToStatus();
      out.mask = std::move(*m);
    } else {
      auto loaded = DecodeJsonMask(*bytes, path);
      if (!loaded.IsOk()) return loaded;
      out = std::move(*loaded);
    }
  }
  if (out.mask.Rows() != out.mask.Cols()) {
    return MakeError(path + ": not square: " + std::to_string(out.mask.Rows()) + " x " +
                     std::to_string(out.mask.Cols()) + " (attention masks are L x L)");
  }
  return out;
}

Status SaveMask(const std::string& path, const Mask& mask, const MaskSpec* spec) {
  auto format = MaskFormatFromPath(path);
  if (!format.IsOk()) return format.ToStatus();
  if (mask.Empty()) return MakeError(path + ": cannot save an empty (0 x 0) mask");
  switch (*format) {
    case MaskFormat::kPng: {
      auto bytes = EncodePng(mask);
      if (!bytes.IsOk()) return MakeError(path + ": " + bytes.Message());
      return WriteFileAtomic(path, *bytes);
    }
    case MaskFormat::kNpy: return SaveNpyFile(path, mask);
    case MaskFormat::kJson: {
      auto text = EncodeJsonMask(mask, spec);
      if (!text.IsOk()) return MakeError(path + ": " + text.Message());
      return WriteFileAtomic(path, *text);
    }
  }
  return MakeError(path + ": unknown mask format");
}

}  // namespace stof::engine
