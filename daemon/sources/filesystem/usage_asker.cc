#include "daemon/sources/filesystem/usage_asker.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace iowatch::daemon {

UsageAsker::UsageAsker() : worker_(std::make_unique<BoundedWorker>()) {}

UsageAsker::~UsageAsker() = default;

void UsageAsker::Reap() {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(stuck_, [&](const auto& entry) { return entry.second.worker->WaitUntil(now); });
}

std::string UsageAsker::PoolOf(std::string_view fstype) {
  return std::string(fstype.substr(0, fstype.find('.')));
}

size_t UsageAsker::StuckIn(std::string_view pool) const {
  return static_cast<size_t>(std::ranges::count(
      stuck_, pool, [](const auto& entry) { return std::string_view(entry.second.pool); }));
}

size_t UsageAsker::Stuck() const {
  const auto now = std::chrono::steady_clock::now();
  return static_cast<size_t>(std::ranges::count_if(
      stuck_, [&](const auto& entry) { return now >= entry.second.stuck_after; }));
}

UsageAsker::Answer UsageAsker::Ask(
    const collectors::FilesystemUsageReader& read, const std::string& path, std::string_view pool,
    std::chrono::steady_clock::time_point deadline,
    std::optional<std::chrono::steady_clock::time_point> stuck_after) {
  Reap();
  if (const auto it = stuck_.find(path); it != stuck_.end()) {
    if (std::chrono::steady_clock::now() < it->second.stuck_after) {
      return {std::unexpected(Error::Io("statvfs is still answering an earlier call", path)), false,
              true};
    }
    return {std::unexpected(
                Error::Io("statvfs has not returned since an earlier sample: not asked again until "
                          "it does",
                          path)),
            true};
  }
  if (const size_t stuck = StuckIn(pool); stuck >= kMaxStuck) {
    return {std::unexpected(Error::Io(
                fmt::format("not asked: {} {} mounts are stuck in statvfs", stuck, pool), path)),
            false};
  }
  // The call's result lives in memory the job owns: it may outlive this call.
  auto result = std::make_shared<Result<collectors::FilesystemUsage>>(
      std::unexpected(Error::Io("statvfs did not run", path)));
  worker_->Start([read, path, result] { *result = read(path); });
  if (worker_->WaitUntil(deadline)) return {std::move(*result), false};
  const auto judged = stuck_after.value_or(deadline);
  stuck_.emplace(path, StuckCall{std::string(pool), judged,
                                 std::exchange(worker_, std::make_unique<BoundedWorker>())});
  if (std::chrono::steady_clock::now() < judged) {
    return {std::unexpected(Error::Io("statvfs did not answer before the sample's end", path)),
            false, true};
  }
  return {std::unexpected(
              Error::Io("statvfs did not answer in time: the mount is stuck, not asked again until "
                        "it answers",
                        path)),
          true};
}

}  // namespace iowatch::daemon
