#include "daemon/sources/filesystem/usage_asker.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <utility>

namespace iowatch::daemon {

// What a batch's job tells its asker, in memory the job owns (the asker may
// stop waiting before the job ends).
struct UsageAsker::Batch {
  explicit Batch(size_t size, Clock::time_point start) : since(start), results(size) {}

  struct Progress {
    size_t answered = 0;      // the batch answers in order: its first `answered` are in
    Clock::time_point since;  // when the call of the next began
  };
  Progress Now() {
    std::lock_guard lock(mutex);
    return {answered, since};
  }
  // Whether the asker still wants answers.
  bool Record(size_t index, Result<collectors::FilesystemUsage> usage) {
    std::lock_guard lock(mutex);
    if (!wanted) return false;
    results[index] = std::move(usage);
    answered = index + 1;
    since = Clock::now();
    return true;
  }
  // The asker stops waiting: the answers so far are the batch's, and the
  // job makes no new call.
  Progress Abandon() {
    std::lock_guard lock(mutex);
    wanted = false;
    return {answered, since};
  }

  std::mutex mutex;
  bool wanted = true;                                        // guarded by mutex
  size_t answered = 0;                                       // guarded by mutex
  Clock::time_point since;                                   // guarded by mutex
  std::vector<Result<collectors::FilesystemUsage>> results;  // guarded by mutex
};

namespace {

// A worker for the statfs calls, named for `top -H`.
std::unique_ptr<BoundedWorker> StatfsWorker() {
  auto worker = std::make_unique<BoundedWorker>();
  worker->SetName("statfs");
  return worker;
}

}  // namespace

UsageAsker::UsageAsker() : worker_(StatfsWorker()) {}

UsageAsker::~UsageAsker() = default;

void UsageAsker::Reap() {
  const auto now = Clock::now();
  std::erase_if(stuck_, [&](const auto& entry) { return entry.second.worker->WaitUntil(now); });
}

std::string_view UsageAsker::PoolOf(std::string_view fstype) {
  return fstype.substr(0, fstype.find('.'));
}

size_t UsageAsker::StuckIn(std::string_view pool) const {
  return static_cast<size_t>(std::ranges::count(
      stuck_, pool, [](const auto& entry) { return std::string_view(entry.second.pool); }));
}

size_t UsageAsker::Stuck() const {
  const auto now = Clock::now();
  return static_cast<size_t>(std::ranges::count_if(
      stuck_, [&](const auto& entry) { return now >= entry.second.stuck_after; }));
}

std::optional<UsageAsker::Answer> UsageAsker::Uncalled(const Request& request) const {
  // Its path is copied only into an answer made here (most requests are called).
  const auto error = [&](std::string message) {
    return std::unexpected(Error::Io(std::move(message), std::string(request.path)));
  };
  if (const auto it = stuck_.find(request.path); it != stuck_.end()) {
    if (Clock::now() < it->second.stuck_after) {
      return Answer{error("statvfs is still answering an earlier call"), false, true};
    }
    return Answer{error("statvfs has not returned since an earlier sample: not asked again until "
                        "it does"),
                  true};
  }
  if (const size_t stuck = StuckIn(request.pool); stuck >= kMaxStuck) {
    return Answer{
        error(fmt::format("not asked: {} {} mounts are stuck in statvfs", stuck, request.pool)),
        false};
  }
  return std::nullopt;
}

std::vector<UsageAsker::Answer> UsageAsker::AskAll(
    const collectors::FilesystemUsageBatchReader& read, std::span<const Request> requests,
    Clock::duration timeout, Clock::time_point deadline) {
  // Short enough to be copied without an allocation: a sample of 36,000
  // mounts leaves most of them not reached.
  std::vector<Answer> answers(requests.size(),
                              Answer{std::unexpected(Error::Io("not asked")), false, false, false});
  size_t next = 0;
  while (next < requests.size() && Clock::now() < deadline) {
    Reap();
    std::vector<size_t> batch;
    for (size_t i = next; i < requests.size(); ++i) {
      if (auto answer = Uncalled(requests[i])) {
        answers[i] = std::move(*answer);
      } else {
        batch.push_back(i);
      }
    }
    if (batch.empty()) break;
    const std::optional<size_t> cut = RunBatch(read, requests, batch, timeout, deadline, answers);
    if (!cut) break;
    // The calls after the one that ran out of time: in the next batch, if
    // there is time left (else not reached).
    next = *cut + 1;
  }
  return answers;
}

std::optional<size_t> UsageAsker::RunBatch(const collectors::FilesystemUsageBatchReader& read,
                                           std::span<const Request> requests,
                                           const std::vector<size_t>& indices,
                                           Clock::duration timeout, Clock::time_point deadline,
                                           std::vector<Answer>& answers) {
  std::vector<std::string> paths;
  paths.reserve(indices.size());
  for (const size_t i : indices) paths.emplace_back(requests[i].path);
  auto batch = std::make_shared<Batch>(indices.size(), Clock::now());
  worker_->Start([read, paths = std::move(paths), batch] {
    read(paths, [&batch](size_t index, Result<collectors::FilesystemUsage> usage) {
      return batch->Record(index, std::move(usage));
    });
  });
  bool returned = false;
  Batch::Progress progress;
  for (;;) {
    progress = batch->Now();
    const bool all = progress.answered == indices.size();
    if (worker_->WaitUntil(all ? deadline : std::min(progress.since + timeout, deadline))) {
      returned = true;
      progress = batch->Now();
      break;
    }
    // Its call ran to its limit, or the sample's time is up (a batch
    // answering fast would otherwise keep this loop going past the deadline).
    if (batch->Now().answered == progress.answered || Clock::now() >= deadline) {
      progress = batch->Abandon();
      break;
    }
  }
  {
    std::lock_guard lock(batch->mutex);
    for (size_t k = 0; k < progress.answered; ++k) {
      answers[indices[k]] = {std::move(batch->results[k]), false};
    }
  }
  if (returned || progress.answered == indices.size()) {
    if (!returned) worker_ = StatfsWorker();                       // ending, past the deadline
    for (size_t k = progress.answered; k < indices.size(); ++k) {  // not answered: a reader's bug
      answers[indices[k]] = {std::unexpected(Error::Io("statvfs was not answered",
                                                       std::string(requests[indices[k]].path))),
                             false};
    }
    return std::nullopt;
  }
  const Request& r = requests[indices[progress.answered]];
  const std::string path(r.path);
  const auto stuck_after = progress.since + timeout;
  stuck_.emplace(
      path, StuckCall{std::string(r.pool), stuck_after, std::exchange(worker_, StatfsWorker())});
  Answer& answer = answers[indices[progress.answered]];
  if (Clock::now() < stuck_after) {
    answer = {std::unexpected(Error::Io("statvfs did not answer before the sample's end", path)),
              false, true};
  } else {
    answer = {std::unexpected(Error::Io(
                  "statvfs did not answer in time: the mount is stuck, not asked again until "
                  "it answers",
                  path)),
              true};
  }
  return indices[progress.answered];
}

}  // namespace iowatch::daemon
