#include "daemon/scheduling/abandoned_io_pool.h"

#include "common/log.h"
#include "daemon/scheduling/probe_counters.h"

namespace iowatch::daemon {

void AbandonedIoPool::Keep(DeviceId device, std::unique_ptr<probes::HeldIo> held) {
  if (!held) return;
  std::lock_guard lock(mutex_);
  spdlog::warn(
      "probes: {} still holds {} I/Os of a run that gave up on it ({} bytes of buffers kept); "
      "no probe runs on it until they complete",
      FormatDevice(device), held->InFlight(), held->Bytes());
  held_[device].push_back(std::move(held));
  Publish();
}

uint32_t AbandonedIoPool::Poll() {
  std::lock_guard lock(mutex_);
  for (auto it = held_.begin(); it != held_.end();) {
    auto& runs = it->second;
    const size_t before = runs.size();
    std::erase_if(runs, [](const auto& held) { return held->Poll() == 0; });  // freed
    if (runs.empty()) {
      spdlog::info(
          "probes: the I/Os {} held completed ({} runs' context and buffers freed); "
          "probing resumes",
          FormatDevice(it->first), before);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  Publish();
  return Total();
}

uint32_t AbandonedIoPool::HeldOn(DeviceId device) const {
  std::lock_guard lock(mutex_);
  const auto it = held_.find(device);
  uint32_t n = 0;
  if (it != held_.end()) {
    for (const auto& held : it->second) n += held->InFlight();
  }
  return n;
}

uint32_t AbandonedIoPool::HeldInAll() const {
  std::lock_guard lock(mutex_);
  return Total();
}

uint32_t AbandonedIoPool::Total() const {
  uint32_t n = 0;
  for (const auto& [device, runs] : held_) {
    for (const auto& held : runs) n += held->InFlight();
  }
  return n;
}

void AbandonedIoPool::Publish() const {
  if (counters_ != nullptr) counters_->SetHeldIos(Total());
}

}  // namespace iowatch::daemon
