// Where the source tree is, found at run time: ctest sets IOWATCH_SOURCE_DIR
// for every unit test (tests/unit/CMakeLists.txt); a test binary run by hand
// from a build tree inside the checkout finds it by walking up from itself.
// Compiled in as a macro, the absolute path made every test object differ
// between two checkouts, so ccache could not share them (a warm CI run
// recompiled every test).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace iowatch::testing {

inline std::string SourceDir() {
  if (const char* dir = std::getenv("IOWATCH_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code ec;
  std::filesystem::path at = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (; !ec && at.has_relative_path(); at = at.parent_path()) {
    std::error_code missing;  // not found is the usual answer, not an error
    if (std::filesystem::is_directory(at / "tests/fixtures", missing)) return at.string();
  }
  return "/nonexistent-source-tree (set IOWATCH_SOURCE_DIR)";  // every fixture read then fails
}

inline std::string FixturesDir() { return SourceDir() + "/tests/fixtures"; }

}  // namespace iowatch::testing
