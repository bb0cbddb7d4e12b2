// Layout files (layout_export.h).
#include "engine/layout/layout_export.h"

#include <nlohmann/json.hpp>

#include "engine/core/atomic_file.h"
#include "engine/core/byte_files.h"
#include "engine/core/json_io.h"

namespace stof::engine {

const char* LayoutExportFormatName(LayoutExportFormat f) {
  switch (f) {
    case LayoutExportFormat::kJson: return "json";
    case LayoutExportFormat::kFlex: return "flex";
    case LayoutExportFormat::kPng: return "png";
    case LayoutExportFormat::kNpy: return "npy";
  }
  return "?";
}

Expected<LayoutExportFormat> ParseLayoutExportFormat(const std::string& name) {
  for (LayoutExportFormat f : {LayoutExportFormat::kJson, LayoutExportFormat::kFlex,
                               LayoutExportFormat::kPng, LayoutExportFormat::kNpy})
    if (name == LayoutExportFormatName(f)) return f;
  return MakeError("layout format: expected json, flex, png or npy, got '" + name + "'");
}

std::vector<uint8_t> BlockClassMatrix(const BlockLayout& layout) {
  std::vector<uint8_t> out(static_cast<size_t>(layout.BlockRows() * layout.BlockCols()),
                           static_cast<uint8_t>(BlockClass::kEmpty));
  const std::vector<int32_t>& ptr = layout.LoadRowPtr();
  const std::vector<int32_t>& col = layout.LoadColIdx();
  const std::vector<uint8_t>& full = layout.LoadIsFull();
  for (int64_t r = 0; r < layout.BlockRows(); ++r)
    for (int32_t k = ptr[r]; k < ptr[r + 1]; ++k)
      out[static_cast<size_t>(r * layout.BlockCols() + col[k])] =
          static_cast<uint8_t>(full[k] ? BlockClass::kFull : BlockClass::kPart);
  return out;
}

Expected<std::string> EncodeLayout(const BlockLayout& layout, LayoutExportFormat format) {
  if (layout.BlockRows() == 0 || layout.BlockCols() == 0)
    return MakeError("layout export: the layout is empty");
  switch (format) {
    case LayoutExportFormat::kJson: return DumpJson(layout.ToJson()) + "\n";
    case LayoutExportFormat::kFlex: return DumpJson(layout.ToFlexJson()) + "\n";
    case LayoutExportFormat::kPng: {
      std::vector<uint8_t> px = BlockClassMatrix(layout);
      for (uint8_t& p : px)
        p = p == static_cast<uint8_t>(BlockClass::kFull)   ? 255
            : p == static_cast<uint8_t>(BlockClass::kPart) ? 128
                                                            : 0;
      return EncodeGrayPng(px, layout.BlockRows(), layout.BlockCols());
    }
    case LayoutExportFormat::kNpy: {
      std::vector<uint8_t> cls = BlockClassMatrix(layout);
      std::string out = NpyHeaderBytes(layout.BlockRows(), layout.BlockCols(), "|u1");
      out.append(reinterpret_cast<const char*>(cls.data()), cls.size());
      return out;
    }
  }
  return MakeError("layout export: unknown format");
}

Status SaveLayout(const std::string& path, const BlockLayout& layout, LayoutExportFormat format) {
  auto bytes = EncodeLayout(layout, format);
  if (!bytes.IsOk()) return MakeError(path + ": " + bytes.Message());
  return WriteFileAtomic(path, *bytes);
}

}  // namespace stof::engine
