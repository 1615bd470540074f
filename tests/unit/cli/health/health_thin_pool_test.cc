// `iowatch health` run whole (RunHealth) on a tree with device-mapper devices
// and a dmsetup (found in PATH, as the command finds it) answering from
// tests/fixtures/thin-pool/: a pool out of data space, read-only, failed,
// unreadable or needing a check is a problem of its dm device (exit 1); a
// pool at 80 % or more of its data or metadata is a warning; healthy pools
// are shown, and exit 0.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/health/health_command.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

struct ThinHealthRan {
  int status = 0;
  std::string out;
};

// A host with dm-0.. named as `names`, and a `dmsetup` first in PATH that
// answers from the fixture set `set`.
ThinHealthRan ThinHealthOn(const std::string& set, const std::vector<std::string>& names,
                           std::vector<std::string> more = {}) {
  iowatch::testing::TempDir root;
  EXPECT_TRUE(root.ok());
  std::filesystem::create_directories(root.path() / "proc");
  for (size_t i = 0; i < names.size(); ++i) {
    const auto dm = root.path() / ("sys/block/dm-" + std::to_string(i)) / "dm";
    std::filesystem::create_directories(dm);
    std::ofstream(dm / "name") << names[i] << "\n";
  }
  std::filesystem::create_directories(root.path() / "bin");
  const std::string dmsetup = root.File("bin/dmsetup");
  std::ofstream(dmsetup) << "#!/bin/sh\nexec sh " << iowatch::testing::FixturesDir()
                         << "/thin-pool/fake-dmsetup.sh " << set << " \"$@\"\n";
  ::chmod(dmsetup.c_str(), 0755);
  const char* old_path = ::getenv("PATH");
  const std::string saved = old_path == nullptr ? "/usr/bin:/bin" : old_path;
  ::setenv("PATH", (root.File("bin") + ":" + saved).c_str(), 1);

  std::vector<std::string> args = {"--no-smart", "--state.dir", root.File("state")};
  args.insert(args.end(), more.begin(), more.end());
  ::testing::internal::CaptureStdout();
  ThinHealthRan ran;
  ran.status = RunHealth(GlobalOptions{root.File("proc"), root.File("sys")}, args);
  ran.out = ::testing::internal::GetCapturedStdout();
  ::setenv("PATH", saved.c_str(), 1);
  return ran;
}

TEST(HealthThinPool, APoolOutOfSpaceFailedOrNeedingACheckIsAProblemOfItsDevice) {
  const ThinHealthRan ran = ThinHealthOn("states", {"vg0-full", "vg0-readonly", "vg1-strict"});
  EXPECT_EQ(ran.status, 1) << ran.out;
  for (const char* line : {
           "dm-0  1.1 GB  dm\n",
           "  thin pool    vg0-full: out_of_data_space, data 100 % of 1.1 GB, metadata 7 % of "
           "16.8 MB\n",
           "  PROBLEM      thin pool out of data space: writes to new blocks of its thin volumes "
           "queue or fail\n",
           "  WARNING      data 100 % used: extend the pool (lvextend)\n",
           "  PROBLEM      thin pool read-only (metadata full, or a metadata error): every write "
           "to its thin volumes fails\n",
           "  WARNING      metadata 100 % used: full metadata makes the pool read-only (lvextend "
           "--poolmetadatasize)\n",
           // Pools sysfs did not name are stories of their own, by pool name.
           "vg0-failed  0.0 GB  dm\n",
           "  thin pool    vg0-failed: fail\n",
           "  PROBLEM      thin pool failed: the pool does not serve I/O\n",
           "  PROBLEM      thin pool status unreadable: the kernel could not read it (dmsetup "
           "status says Error)\n",
           "  PROBLEM      thin pool needs_check: its metadata must be repaired (lvconvert "
           "--repair) before it takes writes again\n",
           "  thin pool    vg1-strict: rw, data 89 % of 2.1 GB, metadata 12 % of 33.6 MB, "
           "error_if_no_space\n",
           "  WARNING      data 89 % used: extend the pool (lvextend)\n",
       }) {
    EXPECT_NE(ran.out.find(line), std::string::npos) << line << "\n" << ran.out;
  }
}

TEST(HealthThinPool, HealthyPoolsAreShownAndExitZero) {
  const ThinHealthRan ran =
      ThinHealthOn("insights-core", {"rootvg-docker--pool", "appsvg-lvapps_docker"});
  EXPECT_EQ(ran.status, 0) << ran.out;
  EXPECT_NE(ran.out.find("  thin pool    rootvg-docker--pool: rw, data 0 % of 66.3 GB, metadata "
                         "0 % of 201.3 MB\n"),
            std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("  thin pool    appsvg-lvapps_docker: rw, data 20 % of 53.7 GB"),
            std::string::npos)
      << ran.out;
  EXPECT_EQ(ran.out.find("WARNING"), std::string::npos) << ran.out;
}

TEST(HealthThinPool, TheJsonCarriesThePool) {
  const ThinHealthRan ran = ThinHealthOn("states", {"vg0-full"}, {"-o", "json"});
  EXPECT_EQ(ran.status, 1) << ran.out;
  const auto doc = nlohmann::json::parse(ran.out);
  const auto& disk = doc["disks"][0];
  EXPECT_EQ(disk["device"], "dm-0");
  EXPECT_EQ(disk["thin_pool"]["pool"], "vg0-full");
  EXPECT_EQ(disk["thin_pool"]["mode"], "out_of_data_space");
  EXPECT_DOUBLE_EQ(disk["thin_pool"]["data_used_percent"].get<double>(), 100);
  EXPECT_EQ(disk["thin_pool"]["data_bytes"], 16384ull * 128 * 512);
  EXPECT_EQ(disk["thin_pool"]["warnings"].size(), 1u);
}

}  // namespace
}  // namespace iowatch::daemon
