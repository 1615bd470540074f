#include "daemon/scheduling/async_device_resolver.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/thread_name.h"

namespace iowatch::daemon {
namespace {

// What identifies a target: the file, or the directory a job's file goes in.
std::string TargetKey(const probes::JobSpec& spec) {
  return spec.filename.empty() ? spec.TargetPath() : spec.filename;
}

}  // namespace

struct AsyncDeviceResolver::State {
  struct Answer {
    std::optional<DeviceId> device;
    uint64_t lookups_done = 0;
    bool pending = false;
  };

  Lookup lookup;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, Answer> answers;
  std::deque<probes::JobSpec> todo;
  bool stopping = false;

  void Run() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [this] { return stopping || !todo.empty(); });
      if (stopping) return;
      const probes::JobSpec spec = std::move(todo.front());
      todo.pop_front();
      lock.unlock();
      const std::optional<DeviceId> device = lookup(spec);  // may block: not under the lock
      lock.lock();
      Answer& answer = answers[TargetKey(spec)];
      answer.device = device;
      answer.pending = false;
      ++answer.lookups_done;
      changed.notify_all();
    }
  }
};

AsyncDeviceResolver::AsyncDeviceResolver(Lookup lookup, std::chrono::milliseconds max_wait)
    : state_(std::make_shared<State>()), max_wait_(max_wait) {
  state_->lookup = std::move(lookup);
  std::thread([state = state_] {
    NameThisThread("resolve");
    state->Run();
  }).detach();
}

AsyncDeviceResolver::~AsyncDeviceResolver() {
  std::lock_guard lock(state_->mutex);
  state_->stopping = true;
  state_->changed.notify_all();
}

std::optional<DeviceId> AsyncDeviceResolver::Resolve(const probes::JobSpec& spec) {
  std::unique_lock lock(state_->mutex);
  State::Answer& answer = state_->answers[TargetKey(spec)];
  if (!answer.pending) {
    answer.pending = true;
    state_->todo.push_back(spec);
    state_->changed.notify_all();
  }
  const uint64_t before = answer.lookups_done;
  state_->changed.wait_for(lock, max_wait_, [&] { return answer.lookups_done != before; });
  return answer.device;
}

}  // namespace iowatch::daemon
