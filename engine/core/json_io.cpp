// ParseJson (a SAX handler that builds the DOM with an explicit stack, refusing duplicate keys
// and deep nesting as it goes), the bounded message formatters and DumpJson; see json_io.h.
// Why SAX: we used nlohmann's parse(text, callback) for the duplicate-key check, but it gives no
// way to stop at a depth, and in nlohmann 3.11.2 it is quadratic: after every object it scans
// the parent container for a discarded member (800 000 plan measurements: 363 s, now 2.4 s;
// docs/robustness.md). nlohmann's exceptions stay inside this file.
#include "engine/core/json_io.h"

#include <new>
#include <utility>
#include <vector>

namespace stof::engine {

namespace {

using Json = nlohmann::json;

std::string Prefix(const std::string& name) { return name.empty() ? "" : name + ": "; }

// The length of the valid UTF-8 sequence at p (n bytes available), or 0 when it is invalid
// (bad lead byte, missing continuation, overlong form, surrogate, above U+10FFFF).
size_t Utf8SequenceLength(const unsigned char* p, size_t n) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (n < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return len;
}

// Builds the DOM from nlohmann's SAX events. Open containers live on m_stack (pointers stay
// valid: a container only grows while it is the innermost open one, and then none of its
// children is open). Returning false stops the parse; m_error says why.
class DomBuilder {
 public:
  DomBuilder(Json& root, const JsonParseOptions& options, std::string prefix)
      : m_root(root), m_options(options), m_prefix(std::move(prefix)) {}

  bool null() { return Add(Json(nullptr)) != nullptr; }
  bool boolean(bool v) { return Add(Json(v)) != nullptr; }
  bool number_integer(Json::number_integer_t v) { return Add(Json(v)) != nullptr; }
  bool number_unsigned(Json::number_unsigned_t v) { return Add(Json(v)) != nullptr; }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) {
    return Add(Json(v)) != nullptr;
  }
  bool string(Json::string_t& v) { return Add(Json(std::move(v))) != nullptr; }
  bool binary(Json::binary_t& v) { return Add(Json::binary(std::move(v))) != nullptr; }
  bool start_object(std::size_t /*elements*/) { return Open(Json::object()); }
  bool start_array(std::size_t /*elements*/) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(Json::string_t& k) {
    Frame& f = m_stack.back();
    // The object is a std::map: finding a key is logarithmic, so the check stays cheap.
    if (m_options.refuse_duplicate_keys && f.value->contains(k)) {
      m_error = m_prefix + Path(&k, 0) + ": duplicate key";
      return false;
    }
    f.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    std::string what = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep its line/column text. The
    // text may quote raw bytes of a binary file: TextForMessage makes them printable.
    if (const size_t p = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && p != std::string::npos)
      what = what.substr(p + 2);
    m_error = m_prefix + "not valid JSON (byte " + std::to_string(position) +
              "): " + TextForMessage(what, 2 * kMessageValueChars);
    return false;
  }

  const std::string& Error() const { return m_error; }

 private:
  struct Frame {
    Json* value;
    std::string key;  // objects: the key of the member being read
  };

  // Adds a finished value (or a new container) where the parse is; gives its address.
  Json* Add(Json&& v) {
    if (m_stack.empty()) {
      m_root = std::move(v);
      return &m_root;
    }
    Frame& f = m_stack.back();
    if (f.value->is_array()) {
      auto& a = f.value->get_ref<Json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    Json& slot = (*f.value)[f.key];
    slot = std::move(v);
    return &slot;
  }

  bool Open(Json&& container) {
    if (static_cast<int>(m_stack.size()) >= m_options.max_depth) {
      const std::string limit = std::to_string(m_options.max_depth);
      m_error = m_prefix + "JSON nested deeper than " + limit + " levels at " +
                Path(nullptr, kMessageValueChars / 2) +
                " (arrays and objects inside each other; the limit is " + limit + ")";
      return false;
    }
    m_stack.push_back(Frame{Add(std::move(container)), {}});
    return true;
  }

  bool Close() {
    m_stack.pop_back();
    return true;
  }

  // The path of the value being read ("a[1].b", "[2].z.k"); `last_key` names the member of
  // the innermost object when given (a key event), else its current key or array index.
  // With max_chars > 0 the path is cut there with "...".
  std::string Path(const std::string* last_key, size_t max_chars) const {
    std::string p;
    for (size_t i = 0; i < m_stack.size(); ++i) {
      const Frame& f = m_stack[i];
      if (max_chars > 0 && p.size() > max_chars) {
        p += "...";
        break;
      }
      if (f.value->is_array()) {
        // The child being read is the last element, or the next one when none is open.
        const size_t n = f.value->size();
        const size_t index = i + 1 < m_stack.size() ? n - 1 : n;
        // Appends, not "[" + to_string(...): GCC 12 warns (-Wrestrict) on the latter.
        p += '[';
        p += std::to_string(index);
        p += ']';
      } else {
        const std::string& k = (i + 1 == m_stack.size() && last_key) ? *last_key : f.key;
        if (!p.empty()) p += '.';
        p += TextForMessage(k, kMessageValueChars / 4);
      }
    }
    return p.empty() ? std::string("the top level") : p;
  }

  Json& m_root;
  const JsonParseOptions& m_options;
  std::string m_prefix;
  std::vector<Frame> m_stack;
  std::string m_error;
};

// A string as a JSON literal, cut ("abc..." inside the quotes, at a character boundary) so
// that `out` stays within kMessageValueChars where it can.
void AppendString(const std::string& s, std::string& out) {
  const size_t budget = out.size() < kMessageValueChars ? kMessageValueChars - out.size() : 0;
  if (s.size() + 2 <= budget) {
    out += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  size_t keep = budget > 5 ? budget - 5 : 0;  // room for the quotes and "..."
  while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xc0) == 0x80) --keep;
  std::string cut = Json(s.substr(0, keep)).dump(-1, ' ', false, Json::error_handler_t::replace);
  cut.insert(cut.size() - 1, "...");
  out += cut;
}

// Compact JSON of v into out, containers at `depth` >= kMessageValueDepth elided; stops adding
// members once out is longer than the bound (the caller cuts the rest).
void AppendValue(const Json& v, int depth, std::string& out) {
  if (v.is_structured()) {
    const bool object = v.is_object();
    if (v.empty()) {
      out += object ? "{}" : "[]";
      return;
    }
    if (depth >= kMessageValueDepth) {
      out += object ? "{...}" : "[...]";
      return;
    }
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ',';
      first = false;
      if (out.size() > kMessageValueChars) {
        out += "...";
        break;
      }
      if (object) {
        AppendString(it.key(), out);
        out += ':';
      }
      AppendValue(*it, depth + 1, out);
    }
    out += object ? '}' : ']';
  } else if (v.is_string()) {
    AppendString(v.get_ref<const std::string&>(), out);
  } else {
    out += v.dump(-1, ' ', false, Json::error_handler_t::replace);  // a scalar: short
  }
}

// Cuts `s` (valid UTF-8) to at most max_bytes at a character boundary, adding "...".
void CutAtCharacter(std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) --end;
  s.resize(end);
  s += "...";
}

}  // namespace

Expected<Json> ParseJson(std::string_view text, const std::string& name,
                         const JsonParseOptions& options) {
  const std::string prefix = Prefix(name);
  Json root;
  DomBuilder builder(root, options, prefix);
  try {
    if (!Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json,
                         /*strict=*/true)) {
      return MakeError(builder.Error().empty() ? prefix + "not valid JSON" : builder.Error());
    }
  } catch (const std::bad_alloc&) {
    return MakeError(prefix + "out of memory while parsing JSON");
  } catch (const Json::exception& e) {
    return MakeError(prefix +
                     "not valid JSON: " + TextForMessage(e.what(), 2 * kMessageValueChars));
  }
  return root;
}

std::string JsonForMessage(const Json& v) {
  std::string out;
  AppendValue(v, 0, out);
  CutAtCharacter(out, kMessageValueChars);
  return out;
}

std::string TextForMessage(std::string_view text, size_t max_bytes) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    const size_t len = Utf8SequenceLength(p + i, text.size() - i);
    if (len == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD, as DumpJson writes it
      ++i;
    } else if (len == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
      out += ' ';
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string DumpJson(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace stof::engine
