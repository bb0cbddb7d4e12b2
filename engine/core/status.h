// Status and Expected<T>: errors as values for every public engine function.
// Used by engine/, kernels/, profiler/ and app/. Library code never exits or aborts on bad
// input; it returns an Error whose message names the input and the field
// ("mask.npy: shape: expected 2 dimensions, got 3"). Exceptions never cross these APIs.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace stof::engine {

// An error message. Wrapped in a type so Expected<std::string> stays unambiguous.
struct Error {
  std::string message;
};

inline Error MakeError(std::string message) { return Error{std::move(message)}; }

// Success or an error message.
class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Error e) : m_ok(false), m_message(std::move(e.message)) {}  // NOLINT: implicit by design
  static Status Ok() { return Status(); }

  bool IsOk() const { return m_ok; }
  explicit operator bool() const { return m_ok; }
  const std::string& Message() const { return m_message; }

  // Prefixes the message with context ("plan.json: " + message); no-op when ok.
  Status WithContext(const std::string& context) && {
    if (!m_ok) m_message = context + m_message;
    return std::move(*this);
  }

 private:
  bool m_ok = true;
  std::string m_message;
};

// A value or an error message. Access the value only after checking IsOk().
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : m_data(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Expected(Error e) : m_data(std::in_place_index<1>, std::move(e.message)) {}  // NOLINT
  Expected(Status s) : m_data(std::in_place_index<1>, s.Message()) {  // NOLINT: failed Status only
    assert(!s.IsOk() && "Expected built from an ok Status");
  }

  bool IsOk() const { return m_data.index() == 0; }
  explicit operator bool() const { return IsOk(); }

  T& Value() & { return std::get<0>(m_data); }
  const T& Value() const& { return std::get<0>(m_data); }
  T&& Value() && { return std::get<0>(std::move(m_data)); }
  T& operator*() & { return Value(); }
  const T& operator*() const& { return Value(); }
  T* operator->() { return &Value(); }
  const T* operator->() const { return &Value(); }

  const std::string& Message() const {
    static const std::string kEmpty;
    return IsOk() ? kEmpty : std::get<1>(m_data);
  }
  Status ToStatus() const { return IsOk() ? Status::Ok() : Status(Error{Message()}); }

 private:
  std::variant<T, std::string> m_data;
};

}  // namespace stof::engine

// Early return on failure inside functions returning Status or Expected<U>.
#define STOF_RETURN_IF_ERROR(expr)                                         \
  do {                                                                     \
    ::stof::engine::Status stof_status_ = (expr);                          \
    if (!stof_status_.IsOk()) return ::stof::engine::Error{stof_status_.Message()}; \
  } while (0)

// `lhs` = the value of `expr` (an Expected<T>), or an early return of its error from a function
// returning Status or Expected<U>: STOF_ASSIGN_OR_RETURN(auto layout, BlockLayout::Build(...));
// `lhs` may declare (auto x, const T& x, ...) or name an existing variable. One per line.
#define STOF_ASSIGN_OR_RETURN(lhs, expr) \
  STOF_ASSIGN_OR_RETURN_IMPL_(STOF_STATUS_CONCAT_(stof_expected_, __LINE__), lhs, expr)
#define STOF_STATUS_CONCAT_INNER_(a, b) a##b
#define STOF_STATUS_CONCAT_(a, b) STOF_STATUS_CONCAT_INNER_(a, b)
#define STOF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)                     \
  auto tmp = (expr);                                                     \
  if (!tmp.IsOk()) return ::stof::engine::Error{tmp.Message()};          \
  lhs = std::move(tmp).Value()
