#include "daemon/scheduling/async_device_resolver.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>

namespace iowatch::daemon {
namespace {

using namespace std::chrono_literals;

probes::JobSpec Spec(const char* file) {
  probes::JobSpec spec;
  spec.filename = file;
  return spec;
}

TEST(AsyncDeviceResolver, AQuickLookupIsAnsweredAtOnce) {
  std::atomic<int> lookups = 0;
  AsyncDeviceResolver resolver(
      [&](const probes::JobSpec&) {
        ++lookups;
        return std::optional<DeviceId>(MakeDeviceId(8, 0));
      },
      5s);
  EXPECT_EQ(resolver.Resolve(Spec("/a")), MakeDeviceId(8, 0));
  EXPECT_EQ(resolver.Resolve(Spec("/a")), MakeDeviceId(8, 0));
  EXPECT_EQ(lookups.load(), 2) << "each call looks again: a remount moves a path";
}

// A stat() on a dead NFS mount: the caller (the event loop) waits max_wait,
// then goes on with what is known; the answer arrives when the lookup ends.
TEST(AsyncDeviceResolver, AHungLookupCostsTheCallerOnlyMaxWait) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto resolver = std::make_unique<AsyncDeviceResolver>(
      [released](const probes::JobSpec& spec) -> std::optional<DeviceId> {
        if (spec.filename == "/nfs/probe") released.wait();
        return MakeDeviceId(0, 42);
      },
      50ms);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(resolver->Resolve(Spec("/nfs/probe")), std::nullopt);
  EXPECT_EQ(resolver->Resolve(Spec("/nfs/probe")), std::nullopt) << "no second lookup queued";
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  release.set_value();
  std::optional<DeviceId> known;
  for (int i = 0; i < 100 && !known; ++i) known = resolver->Resolve(Spec("/nfs/probe"));
  EXPECT_EQ(known, MakeDeviceId(0, 42));
}

TEST(AsyncDeviceResolver, DestructionDoesNotWaitForAHungLookup) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  {
    AsyncDeviceResolver resolver(
        [released](const probes::JobSpec&) -> std::optional<DeviceId> {
          released.wait();
          return std::nullopt;
        },
        10ms);
    EXPECT_EQ(resolver.Resolve(Spec("/hung")), std::nullopt);
  }                     // returns at once: the thread still waits inside the lookup
  release.set_value();  // and ends on its own
}

}  // namespace
}  // namespace iowatch::daemon
