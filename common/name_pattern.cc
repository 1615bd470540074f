#include "common/name_pattern.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include "common/utf8.h"

namespace iowatch {
namespace {

constexpr size_t kQuotedBytes = 64;
// RE2's default is 8 MiB per program; a name filter compiles to a few KiB.
constexpr int64_t kMaxProgramBytes = 1 << 20;

std::string Quoted(std::string_view pattern) {
  if (pattern.size() <= kQuotedBytes) return fmt::format("{:?}", pattern);
  return fmt::format("{:?}... ({} bytes)", pattern.substr(0, kQuotedBytes), pattern.size());
}

}  // namespace

NamePattern::NamePattern(std::shared_ptr<const re2::RE2> compiled)
    : compiled_(std::move(compiled)) {}

Result<NamePattern> NamePattern::Compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("expected a regular expression of at most {} bytes, found {}",
                                 kMaxPatternBytes, Quoted(pattern)));
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxProgramBytes);
  auto compiled =
      std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!compiled->ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("expected a regular expression (RE2 syntax), found {} ({})",
                                 Quoted(pattern), compiled->error()));
  }
  return NamePattern(std::move(compiled));
}

bool NamePattern::FullMatch(std::string_view name) const {
  if (IsValidUtf8(name))
    return RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *compiled_);
  // RE2 reads UTF-8, where `.` never matches a byte that is not part of a
  // valid sequence: "/dev/\xff" escaped `^/(dev|proc|sys)(/.*)?$`. Go's
  // regexp (Prometheus, node_exporter) reads each such byte as U+FFFD, which
  // `.` and `[^/]` match; so is it matched here.
  const std::string valid = ToValidUtf8(name);
  return RE2::FullMatch(re2::StringPiece(valid.data(), valid.size()), *compiled_);
}

const std::string& NamePattern::pattern() const { return compiled_->pattern(); }

}  // namespace iowatch
