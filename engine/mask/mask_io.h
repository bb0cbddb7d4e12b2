// Mask files: PNG (any non-zero pixel = attend; gray, gray+alpha, RGB, RGBA; alpha ignored),
// NPY (2-D; bool, u1/i1, u2/i2, u4/i4, u8/i8, f4, f8, f2; C or Fortran order; non-zero =
// attend) and JSON (a generator spec or run-length rows, see mask_json.h). Format is chosen
// by extension (.png, .npy, .json). Every loader names the file and what is wrong
// ("m.npy: header: truncated", "m.png: not square: 100 x 80") and never crashes.
#pragma once

#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine {

enum class MaskFormat { kPng, kNpy, kJson };
Expected<MaskFormat> MaskFormatFromPath(const std::string& path);

// A loaded mask and, for JSON generator files, the spec it came from.
struct LoadedMask {
  Mask mask;
  bool has_spec = false;
  MaskSpec spec;
};

Expected<LoadedMask> LoadMask(const std::string& path);
// Masks must be square for attention; LoadMask refuses non-square masks with a clear error,
// and a JSON spec past Mask::kMaxLen (its bits would not fit) naming the commands that take it.
// The generator spec of a .json mask file, not generated (seq_len up to kMaxSpecLen,
// mask_json.h): what `stof mask` and `stof layout` build as row runs past Mask::kMaxLen. A
// file of run-length bits is refused by name.
Expected<MaskSpec> LoadMaskSpec(const std::string& path);

// PNG: 8-bit gray, 255 = attend. NPY: |b1 (bool), C order. JSON: run-length rows, or the
// spec when `spec` is given (the file then regenerates exactly). Written through AtomicFile
// (atomic_file.h): a failed or killed save leaves the old file as it was. A non-square mask is
// refused (LoadMask would refuse the file).
Status SaveMask(const std::string& path, const Mask& mask, const MaskSpec* spec = nullptr);

// In-memory variants used by the file functions and tests (`name` appears in messages).
Expected<Mask> DecodePng(const std::string& bytes, const std::string& name);
Expected<Mask> DecodeNpy(const std::string& bytes, const std::string& name);
Expected<LoadedMask> DecodeJsonMask(const std::string& text, const std::string& name);
Expected<std::string> EncodePng(const Mask& mask);
std::string EncodeNpy(const Mask& mask);

}  // namespace stof::engine
