// NamePattern: a user-supplied regular expression matched against a whole
// name (a device's, a cgroup's). RE2 syntax, as Prometheus' relabelling uses:
// matching is linear in the name whatever the pattern, so `(a+)+$` cannot
// stall the event loop, and compiling needs no recursion the pattern controls.
// Not supported (RE2 has no backtracking): lookaround and backreferences.
// Thread-safety: immutable after Compile; FullMatch is safe from any thread,
// and copies share one compiled program.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace re2 {
class RE2;
}

namespace iowatch {

class NamePattern {
 public:
  // Longer patterns are refused before they are parsed: a device or unit
  // filter never needs more, and it bounds the compiler's memory and time.
  static constexpr size_t kMaxPatternBytes = 4096;

  // The error says what was expected and why the pattern was refused, quoting
  // at most its first 64 bytes.
  static Result<NamePattern> Compile(std::string_view pattern);

  // A name that is not valid UTF-8 (a mount point is any bytes) is matched
  // with each stray byte read as U+FFFD, as Go's regexp reads it.
  bool FullMatch(std::string_view name) const;
  const std::string& pattern() const;

 private:
  explicit NamePattern(std::shared_ptr<const re2::RE2> compiled);
  std::shared_ptr<const re2::RE2> compiled_;
};

}  // namespace iowatch
