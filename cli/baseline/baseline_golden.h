// Golden baselines, one per hardware class for a fleet: a baseline exported on one host pinned on
// another host's job that runs the same workload (WorkloadFingerprint) on a
// disk of the same model and firmware, whatever the job is called there, where
// its file lies and what the disk's device number is. A baseline whose
// workload runs here only on disks of another model (or firmware) is refused,
// naming both: it says nothing about these disks.
// Thread-safety: pure functions, but LocalProbesOf stat()s and reads sysfs.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"
#include "config/config.h"
#include "probes/verdicts/job_judge.h"

namespace iowatch::daemon {

// What a disk says it is, as iowatch_disk_info labels it.
struct DiskIdentity {
  std::string model;
  std::string firmware;
};

// The whole disk of `device` ("8:0"); nullopt when sysfs has no such device.
std::optional<DiskIdentity> DiskIdentityOf(const FileTree& sysfs, std::string_view device);

// One of this host's probe jobs, as a golden baseline may land on it.
struct LocalProbe {
  std::string job;          // its name
  std::string fingerprint;  // JobFingerprint: with job and device, the store's key
  std::string workload;     // WorkloadFingerprint: what peers on other hosts share
  std::string device;       // its disk, "8:0"; "" when its target's disk is not found
  DiskIdentity disk;
};

// The config's jobs, their targets resolved under config.state_dir and their
// disks looked up in config.sysfs, as the daemon does before a run.
std::vector<LocalProbe> LocalProbesOf(const config::Config& config);

struct Retargeted {
  std::vector<probes::StoredBaseline> baselines;  // to pin
  std::vector<std::string> placed;                // where each went: "job "a" on 8:0 (...) <- ..."
  std::vector<std::string> skipped;               // those whose workload no job here runs
};

// Each of `imported` on the local probe of its workload and name whose disk is
// of its model and, when both are known, firmware; when no job of its name
// fits, on every probe of its workload whose disk does. An error (nothing to import) when
// one lands on no disk because those of its workload are another model or
// firmware (the message names both), when none of the document's workloads
// runs here, or when two of them land on the same job, device and band.
// `source` names the document in messages.
Result<Retargeted> RetargetBaselines(std::span<const probes::StoredBaseline> imported,
                                     std::span<const LocalProbe> local, std::string_view source);

}  // namespace iowatch::daemon
