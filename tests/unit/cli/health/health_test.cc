// `iowatch health`'s outputs and arguments: names kept harmless in the text,
// each problem said, JSON that reads back; flags, defaults and usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/health/health_format.h"
#include "cli/health/health_options.h"

namespace iowatch::daemon {
namespace {

HostHealth TwoDisks() {
  HostHealth h;
  DiskHealth sda;
  sda.name = "sda";
  sda.model = "Model \x1b]0;title\a";
  sda.size_bytes = 2'000'000'000'000;
  sda.smart = {"passed", "ATA", {{"temperature", "41 °C (limit 60 °C)"}, {"pending sectors", "8"}}};
  sda.io_errors = {{"sda", "read", "I/O", false, 2}, {"sda1", "read", "buffer", true, 1}};
  FilesystemHealth fs;
  fs.mount_point = "/mnt/\x1b[2Jevil";
  fs.fstype = "ext4";
  fs.used_percent = 97;
  fs.inodes_used_percent = 10;
  fs.errors = 4;
  sda.filesystems = {fs};
  sda.probes = {{"nightly", "8:0", true}};
  sda.problems = {"8 pending sectors (attribute 197)", "probe nightly: regressed"};
  DiskHealth dm;
  dm.name = "dm-0";
  dm.smart = {"none", "no SMART of its own (dm)", {}};
  h.disks = {sda, dm};
  h.notes = {"kmsg: /dev/kmsg: Operation not permitted"};
  return h;
}

TEST(HealthFormat, TheTextSaysEachThingAndKeepsHostileNamesHarmless) {
  const std::string text = FormatHealthText(TwoDisks());
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\a'), std::string::npos);
  for (const char* part :
       {"sda  2000.0 GB  Model \\x1b]0;title\\x07\n", "  SMART        passed: ATA\n",
        "    temperature            41 °C (limit 60 °C)\n", "/mnt/\\x1b[2Jevil",
        "   97 %    10 %  rw, 4 errors\n", "2 I/O errors on read", "1 buffer I/O errors on read",
        "  probe        nightly: regressed\n", "  PROBLEM      8 pending sectors (attribute 197)\n",
        "  SMART        none: no SMART of its own (dm)\n", "  problems     none\n",
        "note: kmsg: /dev/kmsg: Operation not permitted\n", "2 disk(s), 2 problem(s)\n"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

TEST(HealthFormat, TheJsonReadsBack) {
  const auto doc = nlohmann::json::parse(FormatHealthJson(TwoDisks()));
  EXPECT_EQ(doc["problems"], 2);
  ASSERT_EQ(doc["disks"].size(), 2u);
  const auto& sda = doc["disks"][0];
  EXPECT_EQ(sda["device"], "sda");
  EXPECT_EQ(sda["smart"]["facts"]["pending sectors"], "8");
  EXPECT_EQ(sda["filesystems"][0]["used_percent"], 97.0);
  EXPECT_EQ(sda["filesystems"][0]["errors"], 4);
  EXPECT_EQ(sda["io_errors"][1]["buffer"], true);
  EXPECT_EQ(sda["probes"][0]["regressed"], true);
  EXPECT_EQ(sda["problems"].size(), 2u);
  EXPECT_TRUE(doc["disks"][1]["problems"].empty());
  EXPECT_EQ(doc["notes"][0], "kmsg: /dev/kmsg: Operation not permitted");
}

TEST(HealthOptions, DefaultsFlagsAndErrors) {
  auto o = ParseHealthArgs({}, "/var/lib/iowatch");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->state_dir, "/var/lib/iowatch");
  EXPECT_TRUE(o->smart);
  EXPECT_FALSE(o->json);
  EXPECT_EQ(o->udev_data, "/run/udev/data");
  o = ParseHealthArgs({"-d", "sda", "-o", "JSON", "--state.dir", "/tmp/s", "--path.udev.data",
                       "/tmp/u", "--smart-timeout", "2.5", "--no-smart"},
                      "/var/lib/iowatch");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->device, "sda");
  EXPECT_TRUE(o->json);
  EXPECT_EQ(o->state_dir, "/tmp/s");
  EXPECT_EQ(o->udev_data, "/tmp/u");
  EXPECT_DOUBLE_EQ(o->smart_timeout_seconds, 2.5);
  EXPECT_FALSE(o->smart);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"-o", "yaml"},
                                              {"--smart-timeout", "0"},
                                              {"--smart-timeout", "5s"},
                                              {"-d"},
                                              {"--path.udev.data"},
                                              {"--verbose"},
                                              {"sda"}}) {
    const auto parsed = ParseHealthArgs(bad, "/var/lib/iowatch");
    EXPECT_FALSE(parsed) << bad[0];
    if (!parsed) {
      EXPECT_NE(parsed.error().message.find("expected"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace iowatch::daemon
