// A probe job as fio describes one: the option names and value syntaxes of
// fio 3.33 for the subset iowatch implements, so a fio user can read and
// write iowatch jobs without a translation table. Defaults are fio's
// (ioengine=psync, direct=0, bs=4k, iodepth=1, rwmixread=50, randrepeat=1;
// io_uring registers neither buffers nor files unless asked).
// Every option is one row of one table (job_option_table.cc, as fio's
// options.c): its name, alias, type, default, accepted values, help, parser
// and printer. ApplyJobOption, JobOptionNames, ToJobOptions, JobFingerprint
// and JobOptionsHelp all read that table. ApplyJobOption sets one option
// from its text; ValidateJobSpec checks the combination (e.g. time_based
// needs runtime, filename xor directory, hipri needs direct=1).
// Errors name the option, the value and what is accepted:
//   bs: expected a size such as "4k", "64KiB" or "1m", found "4q"
// Thread-safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/result.h"

namespace iowatch::probes {

// rw=read:N's bound, 1 GiB: beyond it a hole is a typo, not a pattern.
inline constexpr uint64_t kMaxSequenceAdd = uint64_t{1} << 30;

enum class RwMode { kRead, kWrite, kRandRead, kRandWrite, kReadWrite, kRandReadWrite };
enum class EngineKind { kIoUring, kPsync, kNull, kLibaio };

// fio 3.33's io_uring engine options (engines/io_uring.c), all off by
// default as in fio; only ioengine=io_uring takes them.
struct IoUringOptions {
  bool fixedbufs = false;      // register the buffers: READ_FIXED/WRITE_FIXED
  bool registerfiles = false;  // register the file: IOSQE_FIXED_FILE
  bool sqthread_poll = false;  // IORING_SETUP_SQPOLL; implies registerfiles, as in fio
  bool hipri = false;          // IORING_SETUP_IOPOLL: polled completions
  bool operator==(const IoUringOptions&) const = default;
};

bool IsRandom(RwMode mode);
bool ReadsData(RwMode mode);                   // read, randread, rw, randrw
bool WritesData(RwMode mode);                  // write, randwrite, rw, randrw
std::string_view ToString(RwMode mode);        // fio's spelling: "randread", "rw", "randrw", ...
std::string_view ToString(EngineKind engine);  // "io_uring", "psync", "null", "libaio"
std::string_view EngineChoices();              // "io_uring|libaio|psync|null", for help
// Every engine with its fio name, in the help's order: the one list of them
// (each engine's Name() and every command's choices read it).
std::span<const EnumName<EngineKind>> Engines();

struct JobSpec {
  std::string name = "iowatch";  // fio: name
  std::string filename;          // fio: filename (file or block device)
  std::string directory;         // fio: directory (file is <directory>/<name>.0.0)
  RwMode rw = RwMode::kRead;
  // fio: the ":N" of rw=read:N (ddir_seq_add): bytes added to each next
  // sequential offset; negative runs backward, from the region's last block.
  int64_t rw_sequence_add = 0;
  uint64_t block_size = 4096;  // fio: bs (one value for both directions)
  uint64_t size = 0;           // fio: size; 0 = the existing file's or device's size
  uint64_t offset = 0;         // fio: offset (start of the I/O region)
  uint32_t iodepth = 1;
  // fio: iodepth_batch_submit (alias iodepth_batch): I/Os per submission;
  // fio's default 1 submits each I/O as soon as it is ready (so adjacent
  // sequential I/Os are not merged by the block layer's plug); 0 = iodepth.
  uint32_t iodepth_batch_submit = 1;
  // fio: iodepth_batch_complete_min (alias iodepth_batch_complete): when the
  // queue is full, wait for at least this many completions (0 waits like 1:
  // iowatch never busy-polls).
  uint32_t iodepth_batch_complete_min = 1;
  // fio: iodepth_batch_complete_max: completions taken per reap; 0 or less
  // than the min = the min, as fio. fio's default 1 takes one completion,
  // refills its slot, then takes the next, so a slot is never idle while a
  // completion waits (and the wait counts in clat): reaping them all at
  // once would run a QD32 job at an effective depth of ~26 on a device that
  // completes in bursts.
  uint32_t iodepth_batch_complete_max = 0;
  EngineKind engine = EngineKind::kPsync;
  bool direct = false;
  std::chrono::nanoseconds runtime{0};  // 0 = no limit (runs until the I/O amount is done)
  bool time_based = false;
  std::chrono::nanoseconds ramp_time{0};
  uint32_t rwmixread = 50;      // percent of reads in rw/randrw
  uint64_t rate_iops_read = 0;  // fio: rate_iops=R[,W]; 0 = unpaced
  uint64_t rate_iops_write = 0;
  bool randrepeat = true;            // fio: same random sequence every run
  std::optional<uint64_t> randseed;  // fio: randseed (implies repeatable)
  uint64_t io_size = 0;              // fio: io_size / io_limit; 0 = size
  uint64_t number_ios = 0;           // fio: number_ios; 0 = no limit
  uint32_t fsync = 0;                // fio: fsync=N, fsync after every N writes; 0 = never
  IoUringOptions uring;              // fio: fixedbufs, registerfiles, sqthread_poll, hipri
  // The job set (probes/job_set): clones, how they run and report.
  uint32_t numjobs = 1;          // fio: numjobs, clones running this job side by side
  bool thread = false;           // fio: thread, clones as threads instead of processes
  bool group_reporting = false;  // fio: group_reporting, one report for the group
  bool stonewall = false;        // fio: stonewall, wait for the jobs before it (a new group)
  bool new_group = false;        // fio: new_group, a new reporting group
  // Not options: which clone this spec runs, set by the job set. jobnum
  // names its file under directory (fio's $jobname.$jobnum.0); thread_number
  // (the clone's place among all the run's clones) varies its random streams,
  // as fio seeds each thread apart. Both 0 for a job of one clone.
  uint32_t jobnum = 0;
  uint32_t thread_number = 0;

  // The path the job reads and writes: filename (shared by the clones), or
  // <directory>/<name>.<jobnum>.0.
  std::string TargetPath() const;
  // The number of bytes the job transfers before it ends when not time_based.
  uint64_t IoAmount() const;

  // Field by field, so a round trip through ToJobOptions can be checked whole.
  bool operator==(const JobSpec&) const = default;
};

struct JobOption {
  std::string name;
  std::string value;  // empty for a bare boolean flag ("time_based")
};

// Every option name ApplyJobOption accepts, in fio's spelling: the options
// in table order, then their aliases.
std::span<const std::string_view> JobOptionNames();

// The options for --help: per option its name, alias, value syntax, default
// and a line of help, in table order (two lines each, indented by two).
std::string JobOptionsHelp();

// Sets one option. Unknown names, bad values and out-of-range values are
// errors (code kInvalidArgument) whose message starts with the option name.
Status ApplyJobOption(JobSpec& spec, std::string_view name, std::string_view value);

// Checks the options together: a target is given, bs > 0, size a multiple of bs
// where needed, time_based has a runtime, rwmixread ≤ 100, iodepth 1..4096,
// io_uring's options only with ioengine=io_uring, hipri with direct=1 and
// without fsync, ...
Status ValidateJobSpec(const JobSpec& spec);

// ApplyJobOption for each option in order (later ones win), then ValidateJobSpec.
Result<JobSpec> ParseJobOptions(std::span<const JobOption> options);

// fio time values: an integer with an optional case-insensitive unit, "us"/
// "usec", "ms"/"msec", "s", "m", "h", "d"; a bare number is in `bare_unit`
// (seconds for runtime and ramp_time, as in fio). "sec" and "min" are errors:
// fio 3.33 silently reads them as microseconds.
Result<std::chrono::nanoseconds> ParseFioTime(std::string_view text,
                                              std::chrono::nanoseconds bare_unit);

// The spec as canonical options, in table order: name, rw, bs, ioengine,
// iodepth and direct always, every other option only when it differs from its
// default (so an option added later leaves existing texts and fingerprints
// as they were). Sizes use the largest exact binary suffix ("4k", "1m"), times the
// largest exact unit ("30s", "500ms"), ':' in paths is escaped as "\:".
// ParseJobOptions(ToJobOptions(spec)) == spec for every valid spec.
std::vector<JobOption> ToJobOptions(const JobSpec& spec);

// A stable "key=value;key=value" rendering of ToJobOptions without `name`:
// what a measurement depends on, so a baseline is only compared with runs of
// the same job. Options left at their defaults are omitted, so adding an
// option later does not change the fingerprint of jobs that don't use it.
std::string JobFingerprint(const JobSpec& spec);

// What a measurement depends on wherever it runs: JobFingerprint without the
// probe's path (filename or directory become "target=filename" or
// "target=directory"), hashed to 16 hex digits (FNV-1a, 64 bits). Hosts whose
// jobs share it ran the same workload, whatever they named the job or where
// it probes: the fleet rules' peers (deploy/prometheus/fleet.rules.yml).
std::string WorkloadFingerprint(const JobSpec& spec);
// The same from a JobFingerprint text (a stored run's or an exported
// baseline's): WorkloadFingerprint(s) == WorkloadFingerprintOf(JobFingerprint(s)).
std::string WorkloadFingerprintOf(std::string_view job_fingerprint);

}  // namespace iowatch::probes
