// Byte-level encoders shared by the mask files (mask_io), the layout exports (layout_export)
// and the studio's screenshots: images as PNG bytes in memory and the header of a 2-D NPY
// array. Files are written by atomic_file.h, never here (a PNG is encoded whole first, so a
// failed encode never touches the file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

// rows x cols bytes, row-major, as an 8-bit gray PNG (stb). Fails on an empty or oversized
// matrix or when `px` has the wrong size.
Expected<std::string> EncodeGrayPng(const std::vector<uint8_t>& px, int64_t rows, int64_t cols);

// A width x height image of `channels` 8-bit channels (1 gray .. 4 RGBA) as PNG bytes; rows
// are `stride` bytes apart from `first_row` (a negative stride writes bottom-up rows top
// first, as OpenGL's read-back needs). The caller checks that the pixels exist.
Expected<std::string> EncodePng(const uint8_t* first_row, int width, int height, int channels,
                                int stride);

// The header of an NPY v1.0 file holding a rows x cols C-order array of a one-byte dtype
// (descr "|b1" or "|u1"), padded so the data that follows starts on a 64-byte boundary.
// Callers append the rows * cols data bytes themselves (a 1 GiB mask is not copied twice).
std::string NpyHeaderBytes(int64_t rows, int64_t cols, const std::string& descr);

}  // namespace stof::engine
