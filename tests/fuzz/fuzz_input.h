// What the fuzz targets share: the input as text, split in two at the first
// NUL byte where a target needs two samples (a previous and a current one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace iowatch::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::pair<std::string_view, std::string_view> TwoSamples(std::string_view text) {
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return {text, text};
  return {text.substr(0, nul), text.substr(nul + 1)};
}

// A property every input must keep; a violation is a crash libFuzzer saves.
inline void Require(bool holds) {
  if (!holds) std::abort();
}

}  // namespace iowatch::fuzz
