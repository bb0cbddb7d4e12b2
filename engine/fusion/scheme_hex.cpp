// Fusion code <-> hex (see scheme_hex.h).
#include "engine/fusion/scheme_hex.h"

#include <cctype>

#include "engine/fusion/fusion_scheme.h"

namespace stof::engine {

namespace {
constexpr char kHexDigits[] = "0123456789abcdef";
constexpr size_t kMaxDigits = 1 << 20;  // far above any layer; keeps N's parse bounded
}  // namespace

Expected<std::string> CodeToHex(const std::string& code, const std::string& field) {
  STOF_ASSIGN_OR_RETURN(auto segs, CodeToSegments(code, field));
  const size_t n = code.size();
  const size_t pad = (4 - n % 4) % 4;
  const std::string bits = std::string(pad, '0') + code;
  std::string hex = std::to_string(n) + ":";
  for (size_t i = 0; i < bits.size(); i += 4) {
    int v = 0;
    for (size_t k = 0; k < 4; ++k) v = v * 2 + (bits[i + k] - '0');
    hex.push_back(kHexDigits[v]);
  }
  return hex;
}

Expected<std::string> HexToCode(const std::string& hex, const std::string& field) {
  auto bad = [&](const std::string& why) {
    return MakeError(field + ": expected '<ops>:<hex digits>' (e.g. '14:20e3'), " + why +
                     ", got '" + (hex.size() > 64 ? hex.substr(0, 61) + "..." : hex) + "'");
  };
  const size_t colon = hex.find(':');
  if (colon == std::string::npos || colon == 0) return bad("no op count");
  size_t n = 0;
  for (size_t i = 0; i < colon; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(hex[i]))) return bad("op count is not a number");
    n = n * 10 + static_cast<size_t>(hex[i] - '0');
    if (n > kMaxDigits) return bad("op count too large");
  }
  if (n == 0) return bad("op count is 0");
  const std::string digits = hex.substr(colon + 1);
  const size_t want = (n + 3) / 4;
  if (digits.size() != want) {
    return bad(std::to_string(n) + " ops take " + std::to_string(want) + " hex digits, not " +
               std::to_string(digits.size()));
  }
  std::string bits;
  for (char c : digits) {
    const int lc = std::tolower(static_cast<unsigned char>(c));
    int v = -1;
    if (lc >= '0' && lc <= '9') v = lc - '0';
    if (lc >= 'a' && lc <= 'f') v = lc - 'a' + 10;
    if (v < 0) return bad(std::string(1, '\'') + c + "' is not a hex digit");
    for (int k = 3; k >= 0; --k) bits.push_back(((v >> k) & 1) ? '1' : '0');
  }
  const size_t pad = bits.size() - n;
  if (bits.find('1') < pad) return bad("the " + std::to_string(pad) + " padding bits must be 0");
  return bits.substr(pad);
}

}  // namespace stof::engine
