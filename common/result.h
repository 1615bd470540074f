// Result<T> and Error: how every fallible function in iowatch reports failure.
//
// An Error carries a machine-readable code, the file (and line, when a parser
// knows it) it concerns, the errno that caused it, and a message saying what
// was expected. Errors are values; exceptions are used only at the edges (CLI,
// start-up), where an Error becomes one message and an exit code.
// Thread-safety: plain values, safe to copy between threads.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <expected>
#include <string>
#include <system_error>
#include <utility>

namespace iowatch {

enum class ErrorCode {
  kNotFound,  // the file or device does not exist (ENOENT); often expected (a device vanished)
  kIo,        // any other OS error
  kParse,     // the text does not have the expected format
  kInvalidArgument,
  kUnsupported,
};

struct Error {
  ErrorCode code = ErrorCode::kIo;
  std::string message;  // what was expected or what went wrong, without the location
  std::string path;     // file the error concerns, empty if none
  int line = 0;         // 1-based line in `path`, 0 if not applicable
  int os_errno = 0;
  int column = 0;  // 1-based column on `line`, 0 if not applicable

  // Named ways to make one (leveldb's Status::NotFound(msg)): positional
  // braces are fragile here, os_errno sitting between line and column.
  static Error Parse(std::string message, std::string path, int line, int column = 0) {
    return {.code = ErrorCode::kParse,
            .message = std::move(message),
            .path = std::move(path),
            .line = line,
            .column = column};
  }
  static Error NotFound(std::string message, std::string path = {}) {
    return {.code = ErrorCode::kNotFound, .message = std::move(message), .path = std::move(path)};
  }
  static Error Io(std::string message, std::string path = {}, int os_errno = 0) {
    return {.code = ErrorCode::kIo,
            .message = std::move(message),
            .path = std::move(path),
            .os_errno = os_errno};
  }

  // "path:line:column: message" (or "path:line: message", "path: message"),
  // the form every error is printed in.
  std::string ToString() const {
    std::string where = path;
    if (line > 0) where += fmt::format(":{}", line);
    if (line > 0 && column > 0) where += fmt::format(":{}", column);
    if (where.empty()) return message;
    return fmt::format("{}: {}", where, message);
  }
};

template <typename T>
using Result = std::expected<T, Error>;
// A result without a value: spelled Status everywhere (not Result<void>).
using Status = std::expected<void, Error>;

inline std::unexpected<Error> MakeError(ErrorCode code, std::string message, std::string path = {},
                                        int line = 0, int column = 0) {
  return std::unexpected<Error>(Error{.code = code,
                                      .message = std::move(message),
                                      .path = std::move(path),
                                      .line = line,
                                      .column = column});
}

// A callee's failure passed on unchanged (its file, line and errno kept), as
// the caller's own result type: `if (!read) return ErrorOf(read);`.
template <typename T>
std::unexpected<Error> ErrorOf(const Result<T>& failed) {
  return std::unexpected<Error>(failed.error());
}
template <typename T>
std::unexpected<Error> ErrorOf(Result<T>&& failed) {
  return std::unexpected<Error>(std::move(failed).error());
}

// strerror's text, thread-safely (strerror may share a buffer between threads:
// clang-tidy's concurrency-mt-unsafe).
inline std::string ErrnoText(int err) { return std::generic_category().message(err); }

// Maps an errno to an Error in one place, so ENOENT is always kNotFound.
inline std::unexpected<Error> ErrnoError(int err, std::string what, std::string path) {
  const ErrorCode code =
      err == ENOENT || err == ENODEV || err == ENXIO ? ErrorCode::kNotFound : ErrorCode::kIo;
  return std::unexpected<Error>(Error{.code = code,
                                      .message = fmt::format("{}: {}", what, ErrnoText(err)),
                                      .path = std::move(path),
                                      .os_errno = err});
}

}  // namespace iowatch
