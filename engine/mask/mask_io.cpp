// Mask files: the format by extension, LoadMask and SaveMask (mask_io.h), which dispatch to
// the format's reader or writer (PNG: mask_io_png.cpp, NPY: mask_io_npy.cpp, JSON:
// mask_io_json.cpp), and the file helpers they share (mask_io_internal.h). Called by the CLI,
// the GUI's open/save and plans that reference a mask file. Invariants: every failure is an
// Error naming the file and the problem; a missing file is reported as missing whatever its
// extension; every file is opened by InputFile (file_read.h: regular files only, at most
// MaskFileLimit's bytes); PNG and JSON files are read whole, NPY files are streamed; sizes are
// checked against Mask::kMaxLen before anything is allocated.
// Cost: PNG is by far the slowest to write (stb's deflate), JSON runs the fastest (measured:
// docs/masks.md, "Cost").
#include "engine/mask/mask_io.h"

#include <cctype>
#include <filesystem>
#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/file_read.h"
#include "engine/mask/mask_io_internal.h"

namespace stof::engine {

namespace {

namespace fs = std::filesystem;

using mask_io_detail::EncodeJsonMask;
using mask_io_detail::LoadNpyFile;
using mask_io_detail::MaskFileLimit;
using mask_io_detail::SaveNpyFile;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// ---- Dispatch ---------------------------------------------------------------------------

Expected<MaskFormat> MaskFormatFromPath(const std::string& path) {
  const std::string ext = Lower(fs::path(path).extension().string());
  if (ext == ".png") return MaskFormat::kPng;
  if (ext == ".npy") return MaskFormat::kNpy;
  if (ext == ".json") return MaskFormat::kJson;
  if (ext.empty()) return MakeError(path + ": no file extension; expected .png, .npy or .json");
  return MakeError(path + ": unknown mask format '" + ext + "'; expected .png, .npy or .json");
}

Expected<LoadedMask> LoadMask(const std::string& path) {
  auto format = MaskFormatFromPath(path);
  // A missing or special file is reported as such, whatever its name says about its format.
  STOF_ASSIGN_OR_RETURN(auto file,
                        InputFile::Open(path, MaskFileLimit(format.IsOk() ? *format : MaskFormat::kNpy)));
  if (!format.IsOk()) return format.ToStatus();
  LoadedMask out;
  if (*format == MaskFormat::kNpy) {
    STOF_ASSIGN_OR_RETURN(out.mask, LoadNpyFile(file));
  } else {
    STOF_ASSIGN_OR_RETURN(auto bytes, file.ReadAll());
    if (*format == MaskFormat::kPng) {
      STOF_ASSIGN_OR_RETURN(out.mask, DecodePng(bytes, path));
    } else {
      STOF_ASSIGN_OR_RETURN(out, DecodeJsonMask(bytes, path));
    }
  }
  if (out.mask.Rows() != out.mask.Cols()) {
    return MakeError(path + ": not square: " + std::to_string(out.mask.Rows()) + " x " +
                     std::to_string(out.mask.Cols()) + " (attention masks are L x L)");
  }
  return out;
}

Status SaveMask(const std::string& path, const Mask& mask, const MaskSpec* spec) {
  STOF_ASSIGN_OR_RETURN(auto format, MaskFormatFromPath(path));
  if (mask.Empty()) return MakeError(path + ": cannot save an empty (0 x 0) mask");
  // The readers take square masks only (LoadMask): a file they would refuse is not written.
  if (mask.Rows() != mask.Cols())
    return MakeError(path + ": mask files hold square L x L masks, got " +
                     std::to_string(mask.Rows()) + " x " + std::to_string(mask.Cols()) +
                     " (save the square mask; a KV cache's rows are its last rows)");
  switch (format) {
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
