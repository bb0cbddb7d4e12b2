// The hex form of a fusion code (STOF 4.3: "it can also be converted to hexadecimal format"):
// "<N>:<hex>", N the number of digits (ops), then the code read as a binary number, most
// significant digit first, left-padded with 0s to a multiple of 4 bits, as ceil(N/4) lowercase
// hex digits. "10000011100011" (14 ops) -> "14:20e3". The length prefix makes the round trip
// exact (leading 0 digits are otherwise lost).
// Used by `stof graph --scheme`, docs and (later) plans and the tuner's cache keys.
// Invariants: HexToCode(CodeToHex(c)) == c for every 0/1 code; HexToCode accepts upper case
// and refuses a wrong digit count or padding bits that are not 0.
#pragma once

#include <string>

#include "engine/core/status.h"

namespace stof::engine {

// `code` must hold only 0/1 digits (error naming `field` otherwise).
Expected<std::string> CodeToHex(const std::string& code, const std::string& field = "fusion.code");
Expected<std::string> HexToCode(const std::string& hex, const std::string& field = "fusion.hex");

}  // namespace stof::engine
