// SMART's capabilities go to smartctl only: a process holding CAP_SYS_RAWIO
// and CAP_SYS_ADMIN as an unprivileged user with them ambient (what the
// smart.conf drop-in's AmbientCapabilities gives the DynamicUser daemon)
// holds them out of its own effective set, and the smartctl it starts (here a
// shell printing its own /proc status) has them effective. Root only: the
// test sets that process up in a forked child.
#include "collectors/smart/smartctl_run.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace iowatch::collectors {
namespace {

constexpr uint64_t kSmart = (uint64_t{1} << CAP_SYS_RAWIO) | (uint64_t{1} << CAP_SYS_ADMIN);

// A capability set ("CapEff", "CapAmb") from a /proc status text.
uint64_t CapsIn(const std::string& status, const std::string& field) {
  const size_t at = status.find(field + ":\t");
  return at == std::string::npos ? ~uint64_t{0}
                                 : std::stoull(status.substr(at + field.size() + 2), nullptr, 16);
}

std::string OwnStatus() {
  std::ifstream in("/proc/thread-self/status");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// In the forked child: becomes nobody with SMART's capabilities permitted,
// effective, inheritable and ambient, as systemd starts the unit with the
// drop-in. False when the kernel refuses.
bool BecomeTheUnitsDaemon() {
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return false;
  if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) return false;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  data[0].permitted = data[0].effective = data[0].inheritable = static_cast<uint32_t>(kSmart);
  if (::syscall(SYS_capset, &header, data) != 0) return false;
  for (const int cap : {CAP_SYS_RAWIO, CAP_SYS_ADMIN}) {
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return false;
  }
  return true;
}

// The child's checks, as its exit code's bits.
enum : int {
  kSetupFailed = 1,
  kStillEffective = 2,
  kStillAmbient = 4,
  kChildLacksThem = 8,
  kChildDidNotRun = 16,
  kAmbientAfterSpawn = 32,
};

int HoldAndSpawn() {
  if (!BecomeTheUnitsDaemon()) return kSetupFailed;
  if ((CapsIn(OwnStatus(), "CapEff") & kSmart) != kSmart) return kSetupFailed;
  int failed = 0;
  const std::string held = HoldSmartctlCapabilities();
  const std::string own = OwnStatus();
  if ((CapsIn(own, "CapEff") & kSmart) != 0) failed |= kStillEffective;
  if (CapsIn(own, "CapAmb") != 0) failed |= kStillAmbient;
  auto run = SmartctlRun::Start({"sh", "-c", "cat /proc/self/status"});
  if (!run) return failed | kChildDidNotRun;
  if (CapsIn(OwnStatus(), "CapAmb") != 0) failed |= kAmbientAfterSpawn;
  for (int i = 0; i < 500; ++i) {
    if (auto done = (*run)->Poll()) {
      if ((CapsIn(done->output, "CapEff") & kSmart) != kSmart) failed |= kChildLacksThem;
      return failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return failed | kChildDidNotRun;
}

TEST(SmartctlRun, SmartsCapabilitiesAreSmartctlsAloneNotTheDaemonsEffectiveSet) {
  if (::geteuid() != 0) GTEST_SKIP() << "becoming the unit's unprivileged daemon takes root";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(HoldAndSpawn());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  const int failed = WEXITSTATUS(status);
  ASSERT_EQ(failed & kSetupFailed, 0) << "the kernel refused nobody with ambient capabilities";
  EXPECT_EQ(failed & kStillEffective, 0) << "the daemon still acts with CAP_SYS_RAWIO/ADMIN";
  EXPECT_EQ(failed & kStillAmbient, 0) << "every child of the daemon would get them";
  EXPECT_EQ(failed & kChildDidNotRun, 0) << "the child did not run";
  EXPECT_EQ(failed & kChildLacksThem, 0) << "smartctl lacks CAP_SYS_RAWIO/ADMIN in CapEff";
  EXPECT_EQ(failed & kAmbientAfterSpawn, 0) << "ambient not lowered after the spawn";
}

TEST(SmartctlRun, AsRootOrWithoutThemNothingIsHeld) {
  if (::geteuid() == 0) {
    EXPECT_EQ(HoldSmartctlCapabilities(), "");  // root keeps what root has
  }
}

}  // namespace
}  // namespace iowatch::collectors
