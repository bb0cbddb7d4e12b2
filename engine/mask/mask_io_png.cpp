// PNG mask files (mask_io.h): decoded by stb (any non-zero colour channel = attend; gray,
// gray + alpha, RGB, RGBA, palette; 8 or 16 bits; alpha ignored) and encoded as 8-bit gray
// (255 = attend). LoadMask and SaveMask (mask_io.cpp) call DecodePng and EncodePng. Invariant:
// the IHDR's size is checked against Mask::kMaxLen and the decoder's limit before stb
// allocates the pixels.
#include "engine/mask/mask_io.h"

#include <stb_image.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/core/byte_files.h"
#include "engine/mask/mask_io_internal.h"

namespace stof::engine {

namespace {

using mask_io_detail::kMaxWholeFileBytes;
using mask_io_detail::Str;

constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

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
  // stb's inflate grows its buffer until the data ends or it reaches 2 GiB: a small file whose
  // image data inflates that far (an IDAT "bomb") ends here too, after about 2 GB of memory.
  if (r != nullptr && std::strcmp(r, "outofmem") == 0)
    return "out of memory (the image data inflates past what stb can hold, at most 2 GiB, or "
           "memory ran out)";
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

}  // namespace

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

Expected<std::string> EncodePng(const Mask& mask) {
  if (mask.Empty()) return MakeError("PNG: cannot encode an empty mask");
  std::vector<uint8_t> gray(static_cast<size_t>(mask.Rows() * mask.Cols()), 0);
  ForEachSet(mask, [&](int64_t r, int64_t c) { gray[static_cast<size_t>(r * mask.Cols() + c)] = 255; });
  return EncodeGrayPng(gray, mask.Rows(), mask.Cols());
}

}  // namespace stof::engine
