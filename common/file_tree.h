// Reading files, in one place. ReadFile reads a whole file up to a size
// limit (procfs and sysfs files report size 0, so it reads until EOF instead
// of trusting stat(), and the limit keeps a /dev/zero or a runaway file from
// growing without bound). FileTree is read-only access to a tree such as
// /proc or /sys rooted at an injectable path, so that collectors, the probe
// target's device lookups and tests all run on fixtures (--path.procfs,
// --path.sysfs): nothing reads procfs or sysfs but through one.
// Thread-safety: ReadFile is a pure function of the filesystem; a FileTree is
// immutable after construction and safe to share between threads.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch {

struct ReadFileOptions {
  std::string_view open_error = "cannot open";  // the message's words for each failure
  std::string_view read_error = "cannot read";
  size_t max_bytes = 64 << 20;  // beyond this: kInvalidArgument, nothing returned
};

// The whole content of `path`. Errors carry the path and errno: ENOENT (and
// ENODEV, ENXIO) is kNotFound, a file longer than max_bytes kInvalidArgument.
Result<std::string> ReadFile(const std::filesystem::path& path,
                             const ReadFileOptions& options = {});

class FileTree {
 public:
  explicit FileTree(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path PathOf(std::string_view relative) const { return root_ / relative; }

  // ReadFile of root/relative with the default options.
  Result<std::string> Read(std::string_view relative) const;

  // Names of the entries of a directory (no "." or ".."), unsorted.
  Result<std::vector<std::string>> List(std::string_view relative) const;

  bool Exists(std::string_view relative) const;

 private:
  std::filesystem::path root_;
};

}  // namespace iowatch
