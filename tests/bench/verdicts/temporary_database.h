// A database file of a replay, removed with its SQLite sidecars when this
// goes out of scope (replay_verdicts.cc, replay_passive.cc).
#pragma once

#include <filesystem>
#include <system_error>

namespace iowatch::bench {

struct TemporaryDatabase {
  std::filesystem::path path;
  void Remove() const {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path.string() + suffix, ignored);
    }
  }
  ~TemporaryDatabase() { Remove(); }
};

}  // namespace iowatch::bench
