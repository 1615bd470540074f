#include "cli/biolatency/biolatency_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/biolatency/biolatency_options.h"
#include "cli/biolatency/biolatency_report.h"
#include "cli/shared/cli_output.h"
#include "cli/shared/local_time.h"
#include "cli/shared/sleeper.h"
#include "collectors/bpf/block_io_program.h"
#include "collectors/disk/block_devices.h"
#include "common/terminal_text.h"

namespace iowatch::daemon {
namespace {

using collectors::bpf::BlockIoSample;

DiskNames NamesOf(const FileTree& sysfs) {
  DiskNames names;
  auto devices = collectors::DiscoverBlockDevices(sysfs, collectors::Detail::kNames);
  if (!devices) return names;
  for (const collectors::BlockDevice& d : *devices) {
    if (!d.is_partition) names[{d.major, d.minor}] = d.name;
  }
  return names;
}

// Only the disk named -d, when one is.
BlockIoSample OnlyDisk(BlockIoSample sample, const DiskNames& names, const std::string& device) {
  if (device.empty()) return sample;
  const auto named = [&](const collectors::bpf::DiskOp& d) {
    const auto it = names.find({d.major, d.minor});
    return it != names.end() && it->second == device;
  };
  std::erase_if(sample.latency, [&](const auto& entry) { return !named(entry.first.first); });
  std::erase_if(sample.requests, [&](const auto& entry) { return !named(entry.first); });
  std::erase_if(sample.cgroups, [&](const auto& entry) { return !named(entry.first.second); });
  return sample;
}

}  // namespace

int RunBiolatency(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseBiolatencyArgs(args);
  if (!opts) return ReportError("biolatency", opts.error());
  const FileTree sysfs(global.sysfs);
  const DiskNames names = NamesOf(sysfs);
  if (!opts->device.empty() &&
      std::ranges::none_of(names, [&](const auto& n) { return n.second == opts->device; })) {
    return ReportError(
        "biolatency", Error::NotFound(fmt::format("no disk named '{}'", TerminalText(opts->device)),
                                      sysfs.PathOf("block").string()));
  }
  // Its report has no cgroups: none is looked up.
  auto program = collectors::bpf::BlockIoProgram::Load({.count_cgroups = false});
  if (!program) return ReportError("biolatency", program.error());
  auto previous = program->Read();
  if (!previous) return ReportError("biolatency", previous.error());
  // What libbpf-tools' biolatency says once its programs are attached: a
  // script starts its workload after this line, not after a guessed delay.
  // A stderr that cannot take it changes nothing of the report.
  (void)std::fputs("Tracing block device I/O... Hit Ctrl-C to end.\n", stderr);
  (void)std::fflush(stderr);
  const auto stage =
      opts->queued ? collectors::bpf::BlockStage::kTotal : collectors::bpf::BlockStage::kDevice;
  const Status reported = ReportEveryInterval(
      std::chrono::seconds(opts->interval_s), opts->count, [&]() -> Result<std::string> {
        auto now = program->Read();
        if (!now) return ErrorOf(now);
        const BlockIoSample delta = OnlyDisk(Delta(*now, *previous), names, opts->device);
        previous = std::move(now);
        const std::string time = FormatNow("%Y-%m-%dT%H:%M:%S%z");
        return opts->json
                   ? FormatBiolatencyJson(delta, names, time, static_cast<double>(opts->interval_s))
                   : FormatBiolatencyText(delta, stage, names, time);
      });
  return reported ? 0 : ReportError("biolatency", reported.error());
}

}  // namespace iowatch::daemon
