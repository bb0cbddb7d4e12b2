// Layout files: a BlockLayout written as its own JSON (BlockLayout::ToJson), as
// FlexAttention's block-mask JSON (ToFlexJson), or as a picture of its block classes: an 8-bit
// gray PNG or a u1 NPY with one value per block (PNG: empty 0, part 128, full 255; NPY: the
// BlockClass values empty 0, part 1, full 2). Used by `stof layout --export` and the studio's
// export panel; tested in layout_export_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/layout/block_layout.h"

namespace stof::engine {

enum class LayoutExportFormat { kJson, kFlex, kPng, kNpy };
const char* LayoutExportFormatName(LayoutExportFormat f);  // "json", "flex", "png", "npy"
// Accepts the names above; the error lists them.
Expected<LayoutExportFormat> ParseLayoutExportFormat(const std::string& name);

// BlockRows() x BlockCols() BlockClass values, row-major.
std::vector<uint8_t> BlockClassMatrix(const BlockLayout& layout);

// The file's bytes; fails for an empty (default-constructed) layout.
Expected<std::string> EncodeLayout(const BlockLayout& layout, LayoutExportFormat format);
// EncodeLayout then WriteFileAtomic (atomic_file.h); errors name `path`.
Status SaveLayout(const std::string& path, const BlockLayout& layout, LayoutExportFormat format);

}  // namespace stof::engine
