// Small file helpers shared by the unit tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace iowatch::testing {

// The whole file, or "" when it cannot be read (the caller's expectation then fails).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace iowatch::testing
