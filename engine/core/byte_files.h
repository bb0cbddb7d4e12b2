// Byte-level writers shared by the mask files (mask_io) and the layout exports
// (layout_export): an 8-bit matrix as a gray PNG or as a 2-D NPY array, and writing a byte
// string to a file. Errors name the file ("m.png: cannot write: Permission denied").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

// rows x cols bytes, row-major, as an 8-bit gray PNG (stb). Fails on an empty or oversized
// matrix or when `px` has the wrong size.
Expected<std::string> EncodeGrayPng(const std::vector<uint8_t>& px, int64_t rows, int64_t cols);

// The header of an NPY v1.0 file holding a rows x cols C-order array of a one-byte dtype
// (descr "|b1" or "|u1"), padded so the data that follows starts on a 64-byte boundary.
// Callers append the rows * cols data bytes themselves (a 1 GiB mask is not copied twice).
std::string NpyHeaderBytes(int64_t rows, int64_t cols, const std::string& descr);

// Writes (truncates) `path` with `bytes`; the error names the path and the reason.
Status WriteBytesFile(const std::string& path, const std::string& bytes);

}  // namespace stof::engine
