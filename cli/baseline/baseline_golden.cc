#include "cli/baseline/baseline_golden.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

#include "collectors/disk/block_devices.h"
#include "common/terminal_text.h"
#include "daemon/scheduling/device_busy.h"
#include "daemon/scheduling/probe_executor.h"
#include "probes/spec/job_spec.h"

namespace iowatch::daemon {
namespace {

using probes::StoredBaseline;

// "MODEL" (firmware F), or what is unknown of it.
std::string Described(const DiskIdentity& disk) {
  const std::string model =
      disk.model.empty() ? "disk without a model" : fmt::format("\"{}\"", disk.model);
  return disk.firmware.empty() ? model : fmt::format("{} (firmware {})", model, disk.firmware);
}

// The baseline's own disk, as its export describes it.
DiskIdentity IdentityOf(const StoredBaseline& b) { return {b.baseline.model, b.firmware}; }

// Why `probe`'s disk is not the baseline's kind; "" when it is. Firmware is
// compared when both sides know it: an export of an older iowatch has none.
std::string Mismatch(const StoredBaseline& b, const LocalProbe& probe) {
  if (probe.device.empty()) {
    return fmt::format("job \"{}\": the disk of its target is not found", probe.job);
  }
  const bool same_model = probe.disk.model == b.baseline.model;
  const bool same_firmware =
      b.firmware.empty() || probe.disk.firmware.empty() || probe.disk.firmware == b.firmware;
  if (same_model && same_firmware) return {};
  return fmt::format("job \"{}\" probes {}, a {}", probe.job, probe.device, Described(probe.disk));
}

StoredBaseline PlacedOn(const StoredBaseline& b, const LocalProbe& probe) {
  StoredBaseline placed = b;
  placed.baseline.job = probe.job;
  placed.baseline.fingerprint = probe.fingerprint;
  placed.baseline.device = probe.device;
  placed.baseline.model = probe.disk.model;
  placed.firmware = probe.disk.firmware;
  return placed;
}

std::string BandSuffix(const StoredBaseline& b) {
  return b.baseline.band == probes::kCleanBand ? std::string()
                                               : fmt::format(", load band {}", b.baseline.band);
}

}  // namespace

std::optional<DiskIdentity> DiskIdentityOf(const FileTree& sysfs, std::string_view device) {
  uint32_t major_number = 0, minor_number = 0;
  const size_t colon = device.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto parse = [](std::string_view text, uint32_t& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
  };
  if (!parse(device.substr(0, colon), major_number) ||
      !parse(device.substr(colon + 1), minor_number)) {
    return std::nullopt;
  }
  const auto disk = collectors::FindWholeDisk(sysfs, major_number, minor_number);
  if (!disk) return std::nullopt;
  return DiskIdentity{disk->model, disk->firmware_rev};
}

std::vector<LocalProbe> LocalProbesOf(const config::Config& config) {
  const FileTree sysfs(config.sysfs);
  std::vector<LocalProbe> probes;
  for (const config::ProbeJobConfig& job : config.probes.jobs) {
    const probes::JobSpec spec = config::ResolveProbeTarget(job.spec, config.state_dir);
    LocalProbe probe{
        job.name, probes::JobFingerprint(spec), probes::WorkloadFingerprint(spec), "", {}};
    if (const auto device = ResolveProbeDevice(spec, sysfs)) {
      probe.device = FormatDevice(*device);
      probe.disk = DiskIdentityOf(sysfs, probe.device).value_or(DiskIdentity{});
    }
    probes.push_back(std::move(probe));
  }
  return probes;
}

Result<Retargeted> RetargetBaselines(std::span<const StoredBaseline> imported,
                                     std::span<const LocalProbe> local, std::string_view source) {
  const std::string shown_source = TerminalText(source);  // the file name the user gave
  Retargeted out;
  std::set<std::tuple<std::string, std::string, std::string, int>> keys;
  for (const StoredBaseline& b : imported) {
    const std::string workload = probes::WorkloadFingerprintOf(b.baseline.fingerprint);
    const std::string origin =
        fmt::format("the baseline of job \"{}\" on {}{} in {}", b.baseline.job, b.baseline.device,
                    BandSuffix(b), shown_source);
    std::vector<std::string> mismatches;
    std::vector<const LocalProbe*> fits;
    for (const LocalProbe& probe : local) {
      if (probe.workload != workload) continue;
      if (std::string why = Mismatch(b, probe); !why.empty()) {
        mismatches.push_back(std::move(why));
      } else {
        fits.push_back(&probe);
      }
    }
    // A job of the same name is the same job on another host: the others of its
    // workload (a second disk's) have their own baselines in the document.
    if (std::ranges::any_of(fits, [&](const LocalProbe* p) { return p->job == b.baseline.job; })) {
      std::erase_if(fits, [&](const LocalProbe* p) { return p->job != b.baseline.job; });
    }
    const size_t landed = fits.size();
    for (const LocalProbe* probe : fits) {
      StoredBaseline placed = PlacedOn(b, *probe);
      const probes::Baseline& key = placed.baseline;
      if (!keys.emplace(key.job, key.fingerprint, key.device, key.band).second) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("{} lands on job \"{}\" ({}{}), as another of the document "
                                     "does: import one of them",
                                     origin, probe->job, probe->device, BandSuffix(b)));
      }
      out.placed.push_back(fmt::format("job \"{}\" on {} ({}){} <- {}", probe->job, probe->device,
                                       Described(probe->disk), BandSuffix(b), origin));
      out.baselines.push_back(std::move(placed));
    }
    if (landed > 0) continue;
    if (!mismatches.empty()) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{} was taken on a {}, but {}: a baseline is pinned only on a disk of the "
                      "model and firmware it was taken on; nothing imported",
                      origin, Described(IdentityOf(b)), fmt::join(mismatches, "; ")));
    }
    out.skipped.push_back(fmt::format("{}: no job here runs its workload ({})", origin, workload));
  }
  if (out.baselines.empty() && !imported.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("none of the {} baselines in {} is of a workload a job here runs "
                                 "(the daemon's probes.jobs; give its --config.file)",
                                 imported.size(), shown_source));
  }
  return out;
}

}  // namespace iowatch::daemon
