// Internal pieces shared by the mask-file sources, not part of the public API (mask_io.h is):
// the file helpers of mask_io.cpp (the NPY reader opens its file with them too) and the NPY and
// JSON file writers / reader that LoadMask and SaveMask dispatch to. Included only by
// mask_io.cpp, mask_io_npy.cpp, mask_io_png.cpp and mask_io_json.cpp.
#pragma once

#include <climits>
#include <cstdint>
#include <fstream>
#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine::mask_io_detail {

// PNG and JSON files are read whole; stb takes an int length, so 2 GiB is the hard ceiling.
inline constexpr uint64_t kMaxWholeFileBytes = INT_MAX;

inline std::string Str(uint64_t v) { return std::to_string(v); }

// ---- Files (mask_io.cpp) ----------------------------------------------------------------

// Size of a readable regular file, or an error naming it ("no such file", "is a directory").
Expected<uint64_t> RegularFileSize(const std::string& path);
Expected<std::ifstream> OpenForRead(const std::string& path);

// ---- NPY (mask_io_npy.cpp) --------------------------------------------------------------

// Reads the header, then streams the data a row (or column) at a time.
Expected<Mask> LoadNpyFile(const std::string& path);
// Writes '|b1' in C order through AtomicFile, about 1 MiB at a time.
Status SaveNpyFile(const std::string& path, const Mask& mask);

// ---- JSON (mask_io_json.cpp) ------------------------------------------------------------

// The {"format": "stof-mask", ...} file text: run-length rows, or `spec` when given (refused
// when it does not regenerate `mask`). Messages do not name the file; SaveMask prefixes it.
Expected<std::string> EncodeJsonMask(const Mask& mask, const MaskSpec* spec);

}  // namespace stof::engine::mask_io_detail
