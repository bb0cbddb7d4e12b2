// Internal pieces shared by the mask-file sources, not part of the public API (mask_io.h is):
// the size limit of each format, and the NPY and JSON file writers / reader that LoadMask and
// SaveMask dispatch to. Included only by mask_io.cpp, mask_io_npy.cpp, mask_io_png.cpp and
// mask_io_json.cpp.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "engine/core/file_read.h"
#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine::mask_io_detail {

// PNG and JSON files are read whole; stb takes an int length, so 2 GiB - 1 is the ceiling.
inline constexpr uint64_t kMaxWholeFileBytes = INT_MAX;
// NPY: the largest header (64 KiB, mask_io_npy.cpp) and the largest data, 32768 x 32768
// 8-byte elements (8 GiB); the header's shape then bounds the file exactly.
inline constexpr uint64_t kMaxNpyFileBytes = (uint64_t{1} << 33) + 12 + 65536;

// Each format's limit for InputFile (docs/robustness.md, "Reading files").
inline FileLimit MaskFileLimit(MaskFormat format) {
  switch (format) {
    case MaskFormat::kPng: return {"PNG masks", kMaxWholeFileBytes};
    case MaskFormat::kJson: return {"JSON masks", kMaxWholeFileBytes};
    case MaskFormat::kNpy: break;
  }
  return {"NPY masks", kMaxNpyFileBytes};
}

inline std::string Str(uint64_t v) { return std::to_string(v); }

// ---- NPY (mask_io_npy.cpp) --------------------------------------------------------------

// Reads the header, then streams the data a row (or column) at a time.
Expected<Mask> LoadNpyFile(InputFile& file);
// Writes '|b1' in C order through AtomicFile, about 1 MiB at a time.
Status SaveNpyFile(const std::string& path, const Mask& mask);

// ---- JSON (mask_io_json.cpp) ------------------------------------------------------------

// The {"format": "stof-mask", ...} file text: run-length rows, or `spec` when given (refused
// when it does not regenerate `mask`). Messages do not name the file; SaveMask prefixes it.
Expected<std::string> EncodeJsonMask(const Mask& mask, const MaskSpec* spec);

}  // namespace stof::engine::mask_io_detail
