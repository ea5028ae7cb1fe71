// Error handling for every pipeline stage (decode, validate, translate,
// instantiate). Failures carry the byte offset in the module where the
// problem was found, like wabt's result.h / V8's wasm-result.h, so a user can
// point a hex editor at the exact byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ww {

inline constexpr uint64_t kNoOffset = ~uint64_t{0};

struct Error {
  std::string message;          // the spec's wording where the spec tests check it
  uint64_t offset = kNoOffset;  // byte offset in the module, or kNoOffset

  // "message (at byte 0x1f)" or just "message".
  std::string to_string() const;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT: implicit by design
  static Status Ok() { return {}; }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }
  Error& error() { return *error_; }

 private:
  std::optional<Error> error_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T v) : v_(std::move(v)) {}               // NOLINT
  Result(Error e) : v_(std::move(e)) {}           // NOLINT
  Result(Status s) : v_(std::move(s.error())) {}  // only from a failed Status

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status::Ok() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

inline Error make_error(uint64_t offset, std::string message) { return Error{std::move(message), offset}; }

}  // namespace ww

// Propagate a failed Status/Result from the current function.
#define WW_TRY(expr)                                         \
  do {                                                       \
    auto ww_try_status_ = (expr);                            \
    if (!ww_try_status_.ok()) return ww_try_status_.error(); \
  } while (0)

#define WW_CONCAT_INNER(a, b) a##b
#define WW_CONCAT(a, b) WW_CONCAT_INNER(a, b)
// WW_ASSIGN_OR_RETURN(auto x, read_something());
#define WW_ASSIGN_OR_RETURN(lhs, expr)                                                 \
  auto WW_CONCAT(ww_res_, __LINE__) = (expr);                                          \
  if (!WW_CONCAT(ww_res_, __LINE__).ok()) return WW_CONCAT(ww_res_, __LINE__).error(); \
  lhs = std::move(WW_CONCAT(ww_res_, __LINE__).value())
