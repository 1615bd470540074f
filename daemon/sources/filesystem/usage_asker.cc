#include "daemon/sources/filesystem/usage_asker.h"

#include <fmt/format.h>

#include <utility>

namespace iowatch::daemon {

UsageAsker::UsageAsker() : worker_(std::make_unique<BoundedWorker>()) {}

UsageAsker::~UsageAsker() = default;

void UsageAsker::Reap() {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(stuck_, [&](const auto& entry) { return entry.second->WaitUntil(now); });
}

UsageAsker::Answer UsageAsker::Ask(const collectors::FilesystemUsageReader& read,
                                   const std::string& path,
                                   std::chrono::steady_clock::time_point deadline) {
  Reap();
  if (stuck_.contains(path)) {
    return {std::unexpected(
                Error::Io("statvfs has not returned since an earlier sample: not asked again until "
                          "it does",
                          path)),
            true};
  }
  if (stuck_.size() >= kMaxStuck) {
    return {std::unexpected(Error::Io(
                fmt::format("not asked: {} mounts are stuck in statvfs", stuck_.size()), path)),
            false};
  }
  // The call's result lives in memory the job owns: it may outlive this call.
  auto result = std::make_shared<Result<collectors::FilesystemUsage>>(
      std::unexpected(Error::Io("statvfs did not run", path)));
  worker_->Start([read, path, result] { *result = read(path); });
  if (worker_->WaitUntil(deadline)) return {std::move(*result), false};
  stuck_.emplace(path, std::exchange(worker_, std::make_unique<BoundedWorker>()));
  return {std::unexpected(
              Error::Io("statvfs did not answer in time: the mount is stuck, not asked again until "
                        "it answers",
                        path)),
          true};
}

}  // namespace iowatch::daemon
