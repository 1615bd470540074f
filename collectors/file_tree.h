// FileTree: read-only access to a directory tree such as /proc or /sys, rooted
// at an injectable path so that tests run on fixtures (--path.procfs,
// --path.sysfs). This is the only place collectors touch the filesystem.
// Thread-safety: immutable after construction; safe to share between threads.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

class FileTree {
 public:
  explicit FileTree(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path PathOf(std::string_view relative) const { return root_ / relative; }

  // Whole content of a file. procfs and sysfs files report size 0, so this
  // reads until EOF instead of trusting stat().
  Result<std::string> Read(std::string_view relative) const;

  // Names of the entries of a directory (no "." or ".."), unsorted.
  Result<std::vector<std::string>> List(std::string_view relative) const;

  bool Exists(std::string_view relative) const;

 private:
  std::filesystem::path root_;
};

}  // namespace iowatch::collectors
