#include "probes/job_runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "probes/offset_generator.h"

namespace iowatch::probes {
namespace {

constexpr uint64_t kNsPerSecond = 1'000'000'000;
// Cancellation and the hard limit are noticed within this long even when an
// I/O hangs or pacing asks for a long sleep.
constexpr uint64_t kMaxWaitNs = 100'000'000;
constexpr uint64_t kNoLimit = UINT64_MAX;
constexpr std::chrono::nanoseconds kHardLimitGrace = std::chrono::seconds(10);
constexpr std::chrono::nanoseconds kHardLimitWithoutRuntime = std::chrono::minutes(10);

uint64_t ToNs(std::chrono::nanoseconds d) {
  return d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0;
}

double Seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// One buffer per I/O slot, allocated once so the loop never allocates. The
// contents are random because compressing or deduplicating storage would
// otherwise report the speed of its compressor, not of the medium.
class IoBuffers {
 public:
  static Result<IoBuffers> Allocate(size_t count, size_t size, size_t alignment, uint64_t seed) {
    alignment = std::bit_ceil(std::max<size_t>(alignment, sizeof(void*)));
    IoBuffers buffers;
    buffers.owned_.reserve(count);
    buffers.spans_.reserve(count);
    PortableRandom random(seed);
    for (size_t i = 0; i < count; ++i) {
      void* memory = nullptr;
      if (const int err = posix_memalign(&memory, alignment, size); err != 0) {
        return ErrnoError(err, fmt::format("allocating {} I/O buffers of {} bytes", count, size),
                          "");
      }
      buffers.owned_.emplace_back(static_cast<std::byte*>(memory));
      std::span<std::byte> span(static_cast<std::byte*>(memory), size);
      for (size_t at = 0; at < size; at += sizeof(uint64_t)) {
        const uint64_t word = random.Next();
        std::memcpy(span.data() + at, &word, std::min(sizeof(word), size - at));
      }
      buffers.spans_.push_back(span);
    }
    return buffers;
  }

  std::span<const std::span<std::byte>> Spans() const { return spans_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  std::vector<std::unique_ptr<std::byte, Free>> owned_;
  std::vector<std::span<std::byte>> spans_;
};

CpuUsage ThreadCpu() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return CpuUsage{
      .user_seconds = Seconds(usage.ru_utime),
      .system_seconds = Seconds(usage.ru_stime),
      .voluntary_switches = static_cast<uint64_t>(usage.ru_nvcsw),
      .involuntary_switches = static_cast<uint64_t>(usage.ru_nivcsw),
  };
}

void ResetStats(DirectionStats& stats) {
  stats.ios = stats.bytes = stats.short_ios = stats.errors = 0;
  stats.runtime = std::chrono::nanoseconds(0);
  stats.slat.Reset();
  stats.clat.Reset();
  stats.lat.Reset();
  stats.clat_histogram.Reset();
  stats.lat_histogram.Reset();
}

// One in-flight I/O; its index is both the request tag and the buffer index.
struct Slot {
  IoOp op = IoOp::kRead;
  uint32_t length = 0;
  uint64_t offset = 0;
  uint64_t start_ns = 0;
  uint64_t issue_ns = 0;
  bool measured = false;  // started after the ramp, so its latency counts
};

class Runner {
 public:
  Runner(const JobSpec& spec, ProbeEngine& engine, const RunTarget& target,
         const RunOptions& options, ProbeClock& clock)
      : spec_(spec),
        engine_(engine),
        options_(options),
        clock_(clock),
        synchronous_(engine.IsSynchronous()),
        seeds_(SeedsFor(spec)),
        generators_{
            OffsetGenerator(target.region_offset, target.region_size, spec.block_size,
                            IsRandom(spec.rw), seeds_.read_offsets),
            OffsetGenerator(target.region_offset, target.region_size, spec.block_size,
                            IsRandom(spec.rw), seeds_.write_offsets),
        },
        mix_(spec.rwmixread, seeds_.rw_mix),
        rate_{spec.rate_iops_read, spec.rate_iops_write} {
    const uint32_t depth = spec.iodepth;
    slots_.resize(depth);
    free_slots_.reserve(depth);
    for (uint32_t i = depth; i-- > 0;) free_slots_.push_back(i);
    batch_.reserve(depth);
    completions_.resize(depth);

    reads_ = ReadsData(spec.rw);
    writes_ = WritesData(spec.rw);
    if (!spec.time_based) {
      uint64_t amount = spec.IoAmount();
      if (amount == 0) amount = target.region_size;
      ios_limit_ = (amount + spec.block_size - 1) / spec.block_size;
    }
    if (spec.number_ios != 0) ios_limit_ = std::min(ios_limit_, spec.number_ios);
    runtime_ns_ = ToNs(spec.runtime);
    ramp_ns_ = ToNs(spec.ramp_time);
    hard_limit_ns_ = ToNs(options.hard_limit);
    if (hard_limit_ns_ == 0) {
      hard_limit_ns_ = ramp_ns_ + (runtime_ns_ != 0 ? runtime_ns_ + ToNs(kHardLimitGrace)
                                                    : ToNs(kHardLimitWithoutRuntime));
    }
    progress_interval_ns_ = ToNs(options.progress_interval);
    if (progress_interval_ns_ == 0) progress_interval_ns_ = kNsPerSecond;
    if (!spec.filename.empty() || !spec.directory.empty()) path_ = spec.TargetPath();
  }

  ProbeResult Run();

 private:
  bool Blocked() const {
    return stop_issuing_ || free_slots_.empty() || fsync_pending_ || fsync_in_flight_;
  }
  void StartMeasuredPhase(uint64_t now);
  void CheckEnd(uint64_t now);
  uint64_t Issue(uint64_t now);
  void SubmitBatch();
  void ReapSome(size_t min, uint64_t timeout_ns);
  void Complete(const IoCompletion& completion, uint64_t now);
  void Fail(Error error);
  void Stop(RunEnd end);
  uint64_t DueNs(int dir) const;
  uint64_t NextDeadline(uint64_t now) const;
  void ReportProgress(uint64_t now);
  DirectionStats& Stats(int dir) { return dir == 0 ? result_.read : result_.write; }

  const JobSpec& spec_;
  ProbeEngine& engine_;
  const RunOptions& options_;
  ProbeClock& clock_;
  const bool synchronous_;
  const JobSeeds seeds_;
  OffsetGenerator generators_[2];  // [0] reads, [1] writes
  RwMix mix_;
  const uint64_t rate_[2];
  bool reads_ = false;
  bool writes_ = false;
  std::string path_;

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> batch_;  // queued since the last Submit
  std::vector<IoCompletion> completions_;
  uint32_t in_flight_ = 0;

  uint64_t ios_limit_ = kNoLimit;  // I/Os to issue in the measured phase
  uint64_t runtime_ns_ = 0;
  uint64_t ramp_ns_ = 0;
  uint64_t hard_limit_ns_ = 0;
  uint64_t progress_interval_ns_ = 0;

  uint64_t run_start_ns_ = 0;
  uint64_t hard_deadline_ns_ = 0;
  uint64_t measured_start_ns_ = 0;
  bool ramping_ = false;
  uint64_t measured_issued_ = 0;
  uint64_t paced_issued_[2] = {0, 0};  // since the run started; pacing spans the ramp
  int next_dir_ = -1;                  // decided but not yet due, so pacing does not skew the mix

  uint32_t writes_since_fsync_ = 0;
  bool fsync_pending_ = false;
  bool fsync_in_flight_ = false;

  bool stop_issuing_ = false;
  bool abandoned_ = false;  // the engine failed; in-flight I/Os cannot be reaped
  RunEnd end_ = RunEnd::kCompleted;

  uint64_t next_progress_ns_ = kNoLimit;
  uint64_t last_progress_ns_ = 0;
  uint64_t done_ios_[2] = {0, 0};  // since the run started, for progress rates
  uint64_t done_bytes_[2] = {0, 0};
  uint64_t reported_ios_[2] = {0, 0};
  uint64_t reported_bytes_[2] = {0, 0};

  CpuUsage cpu_before_;
  ProbeResult result_;
};

ProbeResult Runner::Run() {
  result_.spec = spec_;
  run_start_ns_ = clock_.NowNs();
  hard_deadline_ns_ = run_start_ns_ + hard_limit_ns_;
  last_progress_ns_ = run_start_ns_;
  if (options_.on_progress) next_progress_ns_ = run_start_ns_ + progress_interval_ns_;
  ramping_ = true;
  if (ramp_ns_ == 0) StartMeasuredPhase(run_start_ns_);

  uint64_t now = run_start_ns_;
  while (!abandoned_) {
    now = clock_.NowNs();
    if (ramping_ && now >= run_start_ns_ + ramp_ns_) StartMeasuredPhase(now);
    if (now >= hard_deadline_ns_) {
      // Hung I/Os are left to engine.Close(); waiting longer is what the
      // limit exists to prevent.
      if (end_ == RunEnd::kCompleted) end_ = RunEnd::kTimedOut;
      break;
    }
    if (!stop_issuing_) CheckEnd(now);
    if (now >= next_progress_ns_) ReportProgress(now);
    if (stop_issuing_ && in_flight_ == 0) break;

    const uint64_t due_ns = stop_issuing_ ? 0 : Issue(now);
    if (in_flight_ == 0) {
      if (due_ns != 0) clock_.SleepUntilNs(std::min(due_ns, NextDeadline(now)));
      continue;
    }
    if (due_ns == 0 && !Blocked()) {
      // More can be issued: collect whatever has finished without waiting.
      ReapSome(0, 0);
      continue;
    }
    uint64_t wake_ns = NextDeadline(now);
    if (due_ns != 0) wake_ns = std::min(wake_ns, due_ns);
    ReapSome(1, wake_ns > now ? wake_ns - now : 0);
  }

  now = clock_.NowNs();
  if (!ramping_) {
    result_.elapsed = std::chrono::nanoseconds(now - measured_start_ns_);
    const CpuUsage cpu_after = ThreadCpu();
    result_.cpu = CpuUsage{
        .user_seconds = cpu_after.user_seconds - cpu_before_.user_seconds,
        .system_seconds = cpu_after.system_seconds - cpu_before_.system_seconds,
        .voluntary_switches = cpu_after.voluntary_switches - cpu_before_.voluntary_switches,
        .involuntary_switches = cpu_after.involuntary_switches - cpu_before_.involuntary_switches,
    };
    // As fio's update_runtime: every direction that moved data ran for the
    // whole measured phase.
    for (DirectionStats* stats : {&result_.read, &result_.write}) {
      if (stats->ios + stats->errors > 0) stats->runtime = result_.elapsed;
    }
  }
  result_.end = end_;
  return std::move(result_);
}

void Runner::StartMeasuredPhase(uint64_t now) {
  ramping_ = false;
  measured_start_ns_ = now;
  ResetStats(result_.read);
  ResetStats(result_.write);
  result_.fsyncs = 0;
  measured_issued_ = 0;
  cpu_before_ = ThreadCpu();
}

void Runner::Stop(RunEnd end) {
  stop_issuing_ = true;
  if (end_ == RunEnd::kCompleted) end_ = end;
}

void Runner::Fail(Error error) {
  if (!result_.error) result_.error = std::move(error);
  stop_issuing_ = true;
  end_ = RunEnd::kFailed;
}

void Runner::CheckEnd(uint64_t now) {
  if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
    Stop(RunEnd::kInterrupted);
    return;
  }
  if (ramping_) return;
  if (runtime_ns_ != 0 && now - measured_start_ns_ >= runtime_ns_) {
    Stop(RunEnd::kCompleted);
    return;
  }
  // A pending fsync still goes out, so the last N writes are synced too.
  if (measured_issued_ >= ios_limit_ && !fsync_pending_) Stop(RunEnd::kCompleted);
}

uint64_t Runner::DueNs(int dir) const {
  // Exact for any count: whole seconds, then the remainder scaled, so
  // n · 1e9 never overflows.
  const uint64_t n = paced_issued_[dir];
  const uint64_t rate = rate_[dir];
  __extension__ using Wide = unsigned __int128;
  return run_start_ns_ + n / rate * kNsPerSecond +
         static_cast<uint64_t>(static_cast<Wide>(n % rate) * kNsPerSecond / rate);
}

uint64_t Runner::NextDeadline(uint64_t now) const {
  uint64_t deadline = std::min(now + kMaxWaitNs, hard_deadline_ns_);
  const auto consider = [&](uint64_t at) {
    if (at > now) deadline = std::min(deadline, at);
  };
  consider(next_progress_ns_);
  if (ramping_) consider(run_start_ns_ + ramp_ns_);
  if (!ramping_ && !stop_issuing_ && runtime_ns_ != 0) consider(measured_start_ns_ + runtime_ns_);
  return deadline;
}

// Queues and submits what may start now; returns when the next I/O is due
// if pacing holds it back, else 0.
uint64_t Runner::Issue(uint64_t now) {
  if (fsync_in_flight_) return 0;
  if (fsync_pending_) {
    // fsync acts as a barrier, as fio's libaio engine makes it: it waits for
    // the writes before it to complete, so it covers them, and nothing else
    // is in flight while it runs.
    if (in_flight_ > 0) return 0;
    const uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    slots_[index] =
        Slot{.op = IoOp::kFsync, .start_ns = now, .issue_ns = now, .measured = !ramping_};
    if (auto queued = engine_.Queue({.op = IoOp::kFsync, .buffer_index = index, .tag = index});
        !queued) {
      free_slots_.push_back(index);
      Fail(std::move(queued.error()));
      return 0;
    }
    fsync_pending_ = false;
    fsync_in_flight_ = true;
    batch_.push_back(index);
    SubmitBatch();
    return 0;
  }

  uint64_t due_ns = 0;
  const auto block_size = static_cast<uint32_t>(spec_.block_size);
  while (!free_slots_.empty()) {
    if (!ramping_ && measured_issued_ >= ios_limit_) break;
    if (next_dir_ < 0)
      next_dir_ = (reads_ && writes_) ? (mix_.NextIsRead() ? 0 : 1) : (reads_ ? 0 : 1);
    const int dir = next_dir_;
    if (rate_[dir] != 0) {
      if (const uint64_t due = DueNs(dir); due > now) {
        due_ns = due;
        break;
      }
    }
    const uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    const IoOp op = dir == 0 ? IoOp::kRead : IoOp::kWrite;
    const uint64_t offset = generators_[dir].Next();
    slots_[index] = Slot{.op = op,
                         .length = block_size,
                         .offset = offset,
                         .start_ns = now,
                         .issue_ns = now,
                         .measured = !ramping_};
    if (auto queued = engine_.Queue({.op = op,
                                     .offset = offset,
                                     .length = block_size,
                                     .buffer_index = index,
                                     .tag = index});
        !queued) {
      free_slots_.push_back(index);
      Fail(std::move(queued.error()));
      break;
    }
    batch_.push_back(index);
    next_dir_ = -1;
    ++paced_issued_[dir];
    if (!ramping_) ++measured_issued_;
    if (dir == 1 && spec_.fsync != 0 && ++writes_since_fsync_ >= spec_.fsync) {
      writes_since_fsync_ = 0;
      fsync_pending_ = true;
      break;
    }
  }
  if (!batch_.empty()) SubmitBatch();
  return due_ns;
}

void Runner::SubmitBatch() {
  auto submitted = engine_.Submit();
  if (!submitted) {
    // Assume nothing of this batch started: waiting for it could only end at
    // the hard limit.
    for (const uint32_t index : batch_) {
      if (slots_[index].op == IoOp::kFsync) fsync_in_flight_ = false;
      free_slots_.push_back(index);
    }
    batch_.clear();
    Fail(std::move(submitted.error()));
    return;
  }
  in_flight_ += static_cast<uint32_t>(batch_.size());
  if (!synchronous_) {
    // Sync engines did the I/O inside Submit, so their issue time stays the
    // start time and they record no slat, as fio's sync engines.
    const uint64_t issue_ns = clock_.NowNs();
    for (const uint32_t index : batch_) slots_[index].issue_ns = issue_ns;
  }
  batch_.clear();
}

void Runner::ReapSome(size_t min, uint64_t timeout_ns) {
  auto reaped = engine_.Reap(min, completions_, std::chrono::nanoseconds(timeout_ns));
  if (!reaped) {
    Fail(std::move(reaped.error()));
    abandoned_ = true;
    return;
  }
  if (*reaped == 0) return;
  const uint64_t now = clock_.NowNs();
  for (size_t i = 0; i < *reaped; ++i) Complete(completions_[i], now);
}

void Runner::Complete(const IoCompletion& completion, uint64_t now) {
  if (completion.tag >= slots_.size()) {
    Fail(MakeError(ErrorCode::kIo, fmt::format("{} engine: completion with unknown tag {}",
                                               engine_.Name(), completion.tag))
             .error());
    abandoned_ = true;  // the in-flight count can no longer be trusted
    return;
  }
  const auto index = static_cast<uint32_t>(completion.tag);
  const Slot& slot = slots_[index];
  free_slots_.push_back(index);
  --in_flight_;

  if (slot.op == IoOp::kFsync) {
    fsync_in_flight_ = false;
    if (completion.result < 0) {
      Fail(ErrnoError(static_cast<int>(-completion.result), "fsync", path_).error());
    } else if (slot.measured) {
      ++result_.fsyncs;
    }
    return;
  }

  const int dir = slot.op == IoOp::kRead ? 0 : 1;
  DirectionStats& stats = Stats(dir);
  if (completion.result < 0) {
    if (slot.measured) ++stats.errors;
    Fail(ErrnoError(static_cast<int>(-completion.result),
                    fmt::format("{} at offset {}", dir == 0 ? "read" : "write", slot.offset), path_)
             .error());
    return;
  }
  const auto bytes = static_cast<uint64_t>(completion.result);
  ++done_ios_[dir];
  done_bytes_[dir] += bytes;
  if (!slot.measured) return;

  ++stats.ios;
  stats.bytes += bytes;
  if (bytes < slot.length) ++stats.short_ios;
  const uint64_t clat = now - slot.issue_ns;
  const uint64_t lat = now - slot.start_ns;
  if (!synchronous_) stats.slat.Add(slot.issue_ns - slot.start_ns);
  stats.clat.Add(clat);
  stats.lat.Add(lat);
  stats.clat_histogram.Record(clat);
  stats.lat_histogram.Record(lat);
}

void Runner::ReportProgress(uint64_t now) {
  next_progress_ns_ = now + progress_interval_ns_;
  const double interval_s = static_cast<double>(now - last_progress_ns_) / 1e9;
  last_progress_ns_ = now;
  RunProgress progress;
  progress.ramping = ramping_;
  if (interval_s > 0) {
    const auto rate = [&](const uint64_t* done, uint64_t* reported, int dir) {
      const double value = static_cast<double>(done[dir] - reported[dir]) / interval_s;
      reported[dir] = done[dir];
      return value;
    };
    progress.read_iops = rate(done_ios_, reported_ios_, 0);
    progress.write_iops = rate(done_ios_, reported_ios_, 1);
    progress.read_bytes_per_second = rate(done_bytes_, reported_bytes_, 0);
    progress.write_bytes_per_second = rate(done_bytes_, reported_bytes_, 1);
  }
  if (ramping_) {
    progress.eta = std::chrono::nanoseconds(run_start_ns_ + ramp_ns_ - now + runtime_ns_);
  } else {
    const uint64_t elapsed_ns = now - measured_start_ns_;
    double fraction = 0;
    if (runtime_ns_ != 0) {
      fraction = static_cast<double>(elapsed_ns) / static_cast<double>(runtime_ns_);
    }
    if (ios_limit_ != kNoLimit && ios_limit_ != 0) {
      fraction = std::max(fraction,
                          static_cast<double>(measured_issued_) / static_cast<double>(ios_limit_));
    }
    progress.fraction_done = std::min(fraction, 1.0);
    if (progress.fraction_done > 0) {
      // Whichever limit is closest dominates the fraction, so this is the
      // time-based remainder for time-limited runs and an extrapolation
      // otherwise.
      progress.eta = std::chrono::nanoseconds(static_cast<int64_t>(
          static_cast<double>(elapsed_ns) * (1 - progress.fraction_done) / progress.fraction_done));
    }
  }
  options_.on_progress(progress);
}

Result<void> ValidateRun(const JobSpec& spec, const RunTarget& target) {
  if (spec.block_size == 0 || spec.block_size > UINT32_MAX) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bs: {} is out of range (1 to 4GiB - 1)", spec.block_size));
  }
  if (spec.iodepth == 0) return MakeError(ErrorCode::kInvalidArgument, "iodepth: must be > 0");
  if (target.region_size / spec.block_size == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the I/O region of {} bytes holds no whole block of bs={}",
                                 target.region_size, spec.block_size));
  }
  const uint64_t align = target.offset_alignment;
  if (align > 1 && (spec.block_size % align != 0 || target.region_offset % align != 0)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bs={} and offset={} must be multiples of {} bytes on this target",
                                 spec.block_size, target.region_offset, align));
  }
  return {};
}

}  // namespace

Result<ProbeResult> RunJob(const JobSpec& spec, ProbeEngine& engine, const RunTarget& target,
                           const RunOptions& options) {
  if (auto valid = ValidateRun(spec, target); !valid) return std::unexpected(valid.error());
  auto buffers =
      IoBuffers::Allocate(spec.iodepth, spec.block_size, target.memory_alignment,
                          SeedsFromBase(spec.randseed.value_or(kDefaultRandSeed)).buffer_fill);
  if (!buffers) return std::unexpected(buffers.error());
  if (auto opened = engine.Open(EngineTarget{target.fd, buffers->Spans()}, spec.iodepth); !opened) {
    return std::unexpected(opened.error());
  }
  SteadyProbeClock steady_clock;
  ProbeClock& clock = options.clock != nullptr ? *options.clock : steady_clock;
  ProbeResult result = Runner(spec, engine, target, options, clock).Run();
  // Close before the buffers go: an async engine may still own hung I/Os.
  engine.Close();
  return result;
}

}  // namespace iowatch::probes
