// PNG / NPY encoders of byte_files.h.
#include "engine/core/byte_files.h"

#include <stb_image_write.h>

#include <climits>

#include "engine/core/text_format.h"

namespace stof::engine {

namespace {
void AppendToString(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                             static_cast<size_t>(size));
}
}  // namespace

Expected<std::string> EncodeGrayPng(const std::vector<uint8_t>& px, int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1) return MakeError("PNG: cannot encode an empty image");
  if (rows > INT_MAX || cols > INT_MAX) return MakeError("PNG: image too large");
  if (static_cast<int64_t>(px.size()) != rows * cols)
    return MakeError("PNG: " + std::to_string(px.size()) + " pixels for a " +
                     std::to_string(rows) + " x " + std::to_string(cols) + " image");
  const int w = static_cast<int>(cols), h = static_cast<int>(rows);
  return EncodePng(px.data(), w, h, 1, w);
}

Expected<std::string> EncodePng(const uint8_t* first_row, int width, int height, int channels,
                                int stride) {
  if (width < 1 || height < 1) return MakeError("PNG: cannot encode an empty image");
  std::string out;
  // With valid arguments stb fails only when an allocation fails: its filtered copy of the
  // image and the compressed stream (about twice the raw bytes) live at once.
  if (!stbi_write_png_to_func(AppendToString, &out, width, height, channels, first_row, stride)) {
    const double raw = static_cast<double>(width) * height * channels;
    return MakeError("PNG: encoding failed: out of memory (a " + std::to_string(width) + " x " +
                     std::to_string(height) + " image of " + std::to_string(channels) +
                     " channel" + (channels == 1 ? "" : "s") + " needs about " +
                     FormatBytes(2 * raw) + " while it is compressed)");
  }
  return out;
}

std::string NpyHeaderBytes(int64_t rows, int64_t cols, const std::string& descr) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // Pad with spaces so the data starts on a 64-byte boundary, ending the header with '\n'.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  out += dict;
  return out;
}

}  // namespace stof::engine
