// NPY mask files (mask_io.h): the header (own parser of the Python dict literal; 2-D shape,
// bool / (u)int / float dtypes, C or Fortran order), the data decoded to a Mask (non-zero =
// attend; -0.0 is 0) and the '|b1' writer. LoadMask and SaveMask (mask_io.cpp) call
// LoadNpyFile and SaveNpyFile (mask_io_internal.h); DecodeNpy / EncodeNpy are the in-memory
// forms. Invariants: a file's size is checked against its header before its data is read, and
// the data is streamed a row (or column) at a time, so an 8 GiB f8 file never sits in memory.
#include "engine/mask/mask_io.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/byte_files.h"
#include "engine/core/json_io.h"
#include "engine/mask/mask_io_internal.h"

namespace stof::engine {

namespace {

using mask_io_detail::Str;

// NumPy itself refuses headers above 10000 bytes by default; 64 KiB leaves room and still
// bounds what a hostile header can make us read.
constexpr uint64_t kMaxNpyHeaderBytes = 65536;
constexpr char kNpyMagic[] = "\x93NUMPY";

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

// Reads exactly n bytes into dst; an error naming the input on a short or failed read.
using ByteSource = std::function<Status(char* dst, size_t n)>;

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
    if (Status got = read(reinterpret_cast<char*>(buf.data()), buf.size()); !got.IsOk()) {
      return MakeError(got.Message() + " (reading " + (h.fortran ? "column " : "row ") +
                       std::to_string(line) + " of the data)");
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

// ---- NPY writing ------------------------------------------------------------------------

// Row r of the mask as NPY '|b1' bytes (0 or 1) into dst[0, cols), which starts zeroed.
void NpyRowBytes(const Mask& m, int64_t r, char* dst) {
  const uint64_t* words = m.RowWords(r);
  for (int64_t w = 0; w < m.WordsPerRow(); ++w)
    for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) dst[w * 64 + std::countr_zero(bits)] = 1;
}

}  // namespace

namespace mask_io_detail {

Expected<Mask> LoadNpyFile(InputFile& f) {
  std::string prefix(static_cast<size_t>(std::min<uint64_t>(f.Size(), 12 + kMaxNpyHeaderBytes)),
                     '\0');
  STOF_RETURN_IF_ERROR(f.ReadExactly(prefix.data(), prefix.size()));
  STOF_ASSIGN_OR_RETURN(auto header, ParseNpyHeader(prefix, f.Size(), f.Path()));
  STOF_RETURN_IF_ERROR(f.Seek(header.data_offset));
  return DecodeNpyData(header, [&f](char* dst, size_t n) { return f.ReadExactly(dst, n); },
                       f.Path());
}

// The NPY file streamed through the atomic writer about 1 MiB at a time, so a 1 GiB mask
// (L = 32768) is never a 1 GiB string as EncodeNpy's would be.
Status SaveNpyFile(const std::string& path, const Mask& mask) {
  STOF_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  STOF_RETURN_IF_ERROR(f.Write(NpyHeaderBytes(mask.Rows(), mask.Cols(), "|b1")));
  const size_t cols = static_cast<size_t>(mask.Cols());
  const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t{1} << 20) / mask.Cols());
  std::string chunk;
  for (int64_t r0 = 0; r0 < mask.Rows(); r0 += rows_per_chunk) {
    const int64_t r1 = std::min(mask.Rows(), r0 + rows_per_chunk);
    chunk.assign(static_cast<size_t>(r1 - r0) * cols, '\0');
    for (int64_t r = r0; r < r1; ++r) NpyRowBytes(mask, r, chunk.data() + static_cast<size_t>(r - r0) * cols);
    STOF_RETURN_IF_ERROR(f.Write(chunk));
  }
  return f.Commit();
}

}  // namespace mask_io_detail

Expected<Mask> DecodeNpy(const std::string& bytes, const std::string& name) {
  STOF_ASSIGN_OR_RETURN(auto header, ParseNpyHeader(bytes, bytes.size(), name));
  size_t pos = static_cast<size_t>(header.data_offset);
  return DecodeNpyData(header, [&](char* dst, size_t n) -> Status {
    if (bytes.size() - pos < n) return MakeError(name + ": data: truncated");
    std::memcpy(dst, bytes.data() + pos, n);
    pos += n;
    return Status::Ok();
  }, name);
}

std::string EncodeNpy(const Mask& mask) {
  std::string out = NpyHeaderBytes(mask.Rows(), mask.Cols(), "|b1");
  const size_t data_at = out.size();
  out.resize(data_at + static_cast<size_t>(mask.Rows() * mask.Cols()), '\0');
  for (int64_t r = 0; r < mask.Rows(); ++r)
    NpyRowBytes(mask, r, out.data() + data_at + static_cast<size_t>(r * mask.Cols()));
  return out;
}

}  // namespace stof::engine
