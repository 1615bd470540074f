// The sysfs attributes of a block device, as the one walker reads them: the
// input is split at NUL bytes into the contents of a disk's attributes and
// written into a scratch sysfs tree (tmpfs), which DiscoverBlockDevices then
// reads with every attribute. Whatever the files hold, the disk and its
// partition are found, and every text that reaches a label (model, serial,
// wwid, dm name, scheduler, md level) is valid UTF-8.
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>

#include "collectors/disk/block_devices.h"
#include "common/utf8.h"
#include "tests/fuzz/fuzz_input.h"

namespace fs = std::filesystem;
using iowatch::fuzz::Require;

namespace {

constexpr std::array kAttributes = {
    "dev",
    "device/model",
    "device/serial",
    "wwid",
    "dm/name",
    "queue/rotational",
    "queue/scheduler",
    "queue/logical_block_size",
    "queue/nr_requests",
    "queue/max_sectors_kb",
    "md/level",
    "md/chunk_size",
    "md/raid_disks",
    "sda1/dev",
};

// The scratch tree, removed when the process exits: a static's destructor,
// not an atexit handler (one registered while the static was being built ran
// after its destruction and removed nothing, leaving a tree in /dev/shm per
// run).
struct ScratchTree {
  fs::path dir = fs::path("/dev/shm") / ("iowatch-fuzz-sysfs-" + std::to_string(getpid()));
  ScratchTree() {
    for (const char* sub : {"device", "dm", "queue", "md", "sda1"}) {
      fs::create_directories(dir / "block/sda" / sub);
    }
    std::ofstream(dir / "block/sda/sda1/partition") << "1\n";
  }
  ~ScratchTree() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  ScratchTree(const ScratchTree&) = delete;
  ScratchTree& operator=(const ScratchTree&) = delete;
};

const fs::path& Root() {
  static const ScratchTree tree;
  return tree.dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = iowatch::fuzz::AsText(data, size);
  for (const char* attribute : kAttributes) {
    const size_t nul = text.find('\0');
    std::ofstream(Root() / "block/sda" / attribute, std::ios::trunc) << text.substr(0, nul);
    text = nul == std::string_view::npos ? std::string_view() : text.substr(nul + 1);
  }
  const auto devices = iowatch::collectors::DiscoverBlockDevices(iowatch::FileTree(Root()));
  Require(devices.has_value() && devices->size() == 2 && (*devices)[0].name == "sda");
  for (const auto& device : *devices) {
    for (const std::string* label :
         {&device.model, &device.serial, &device.wwid, &device.dm_name, &device.queue.scheduler}) {
      Require(iowatch::IsValidUtf8(*label));
    }
    if (device.md) Require(iowatch::IsValidUtf8(device.md->level));
  }
  return 0;
}
