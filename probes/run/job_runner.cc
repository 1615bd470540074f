#include "probes/run/job_runner.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/clock.h"
#include "probes/run/in_flight_slots.h"
#include "probes/run/io_buffers.h"
#include "probes/run/offset_generator.h"
#include "probes/run/progress_meter.h"
#include "probes/run/run_limits.h"
#include "probes/run/thread_cpu.h"

namespace iowatch::probes {
namespace {

// Cancellation and the hard limit are noticed within this long even when an
// I/O hangs or pacing asks for a long sleep.
constexpr uint64_t kMaxWaitNs = 100'000'000;

void ResetStats(DirectionStats& stats) {
  stats.ios = stats.bytes = stats.short_ios = stats.errors = 0;
  stats.runtime = std::chrono::nanoseconds(0);
  stats.slat.Reset();
  stats.clat.Reset();
  stats.lat.Reset();
  stats.clat_histogram.Reset();
  stats.lat_histogram.Reset();
}

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
                            IsRandom(spec.rw), seeds_.read_offsets, spec.rw_sequence_add),
            OffsetGenerator(target.region_offset, target.region_size, spec.block_size,
                            IsRandom(spec.rw), seeds_.write_offsets, spec.rw_sequence_add),
        },
        mix_(spec.rwmixread, seeds_.rw_mix),
        rate_{spec.rate_iops_read, spec.rate_iops_write},
        reads_(ReadsData(spec.rw)),
        writes_(WritesData(spec.rw)),
        limits_(LimitsFor(spec, target.region_size, options.hard_limit)),
        batch_submit_(spec.iodepth_batch_submit == 0 ? spec.iodepth : spec.iodepth_batch_submit),
        slots_(spec.iodepth),
        reap_min_(std::clamp(spec.iodepth_batch_complete_min, 1u, spec.iodepth)),
        completions_(
            std::clamp(std::max(spec.iodepth_batch_complete_max, spec.iodepth_batch_complete_min),
                       1u, spec.iodepth)),
        progress_(options.on_progress, options.progress_interval) {
    if (!spec.filename.empty() || !spec.directory.empty()) path_ = spec.TargetPath();
  }

  ProbeResult Run();

 private:
  bool Blocked() const {
    return stop_issuing_ || !slots_.HasFree() || fsync_pending_ || fsync_in_flight_;
  }
  void StartMeasuredPhase(uint64_t now);
  void CheckEnd(uint64_t now);
  uint64_t Issue(uint64_t now);
  void IssueFsync(uint64_t now);
  bool QueueIo(int dir, uint64_t now);
  void SubmitBatch();
  void ReapSome(size_t min, uint64_t timeout_ns);
  void Complete(const IoCompletion& completion, uint64_t now);
  void Fail(Error error);
  void Stop(RunEnd end);
  uint64_t DueNs(int dir) const;
  uint64_t NextDeadline(uint64_t now) const;
  RunPosition Position() const;
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
  const bool reads_;
  const bool writes_;
  const RunLimits limits_;
  std::string path_;

  const uint32_t batch_submit_;  // I/Os per Submit (fio's iodepth_batch_submit)
  uint32_t batched_ = 0;         // queued since the last Submit
  InFlightSlots slots_;
  // fio's iodepth_batch_complete_min/max: completions awaited when nothing
  // more can be issued, and taken per reap (the buffer's size).
  const uint32_t reap_min_;
  std::vector<IoCompletion> completions_;

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

  ProgressMeter progress_;

  ThreadCpuMeter cpu_;  // over the measured phase
  ProbeResult result_;
};

ProbeResult Runner::Run() {
  result_.spec = spec_;
  run_start_ns_ = clock_.NowNs();
  hard_deadline_ns_ = run_start_ns_ + limits_.hard_limit_ns;
  progress_.Start(run_start_ns_);
  ramping_ = true;
  if (limits_.ramp_ns == 0) StartMeasuredPhase(run_start_ns_);

  uint64_t now = run_start_ns_;
  while (!abandoned_) {
    now = clock_.NowNs();
    if (ramping_ && now >= run_start_ns_ + limits_.ramp_ns) StartMeasuredPhase(now);
    if (now >= hard_deadline_ns_) {
      // Hung I/Os are left to engine.Close(); waiting longer is what the
      // limit exists to prevent.
      if (end_ == RunEnd::kCompleted) end_ = RunEnd::kTimedOut;
      break;
    }
    if (!stop_issuing_) CheckEnd(now);
    if (now >= progress_.NextReportNs()) progress_.Report(now, Position());
    // Requests a partial submission left behind were counted as issued:
    // a run that ends normally submits them and waits for them too.
    const bool finishing = stop_issuing_ && end_ == RunEnd::kCompleted;
    if (finishing && !slots_.BatchEmpty()) SubmitBatch();
    if (stop_issuing_ && slots_.InFlight() == 0 && (slots_.BatchEmpty() || !finishing)) break;

    const uint64_t due_ns = stop_issuing_ ? 0 : Issue(now);
    if (slots_.InFlight() == 0) {
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
    ReapSome(reap_min_, wake_ns > now ? wake_ns - now : 0);
  }

  now = clock_.NowNs();
  if (!ramping_) {
    result_.elapsed = std::chrono::nanoseconds(now - measured_start_ns_);
    result_.cpu = cpu_.SinceStart();
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
  cpu_.Start();
  if (options_.on_measuring) options_.on_measuring();
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
  if (limits_.runtime_ns != 0 && now - measured_start_ns_ >= limits_.runtime_ns) {
    Stop(RunEnd::kCompleted);
    return;
  }
  // A pending fsync still goes out, so the last N writes are synced too.
  if (measured_issued_ >= limits_.ios && !fsync_pending_) Stop(RunEnd::kCompleted);
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
  consider(progress_.NextReportNs());
  if (ramping_) consider(run_start_ns_ + limits_.ramp_ns);
  if (!ramping_ && !stop_issuing_ && limits_.runtime_ns != 0) {
    consider(measured_start_ns_ + limits_.runtime_ns);
  }
  return deadline;
}

// Queues and submits what may start now; returns when the next I/O is due
// if pacing holds it back, else 0.
uint64_t Runner::Issue(uint64_t now) {
  if (fsync_in_flight_) return 0;
  if (fsync_pending_) {
    IssueFsync(now);
    return 0;
  }

  uint64_t due_ns = 0;
  while (slots_.HasFree()) {
    if (!ramping_ && measured_issued_ >= limits_.ios) break;
    if (next_dir_ < 0)
      next_dir_ = (reads_ && writes_) ? (mix_.NextIsRead() ? 0 : 1) : (reads_ ? 0 : 1);
    const int dir = next_dir_;
    if (rate_[dir] != 0) {
      if (const uint64_t due = DueNs(dir); due > now) {
        due_ns = due;
        break;
      }
    }
    if (!QueueIo(dir, now)) break;
    if (++batched_ >= batch_submit_) {
      SubmitBatch();
      if (stop_issuing_) break;
      // The next I/O starts after this submission, as in fio.
      if (slots_.HasFree()) now = clock_.NowNs();
    }
    next_dir_ = -1;
    ++paced_issued_[dir];
    if (!ramping_) ++measured_issued_;
    if (dir == 1 && spec_.fsync != 0 && ++writes_since_fsync_ >= spec_.fsync) {
      writes_since_fsync_ = 0;
      fsync_pending_ = true;
      break;
    }
  }
  if (!slots_.BatchEmpty()) SubmitBatch();
  return due_ns;
}

// Sends the pending fsync once nothing else is in flight.
void Runner::IssueFsync(uint64_t now) {
  // fsync acts as a barrier, as fio's libaio engine makes it: it waits for
  // the writes before it to complete, so it covers them, and nothing else
  // is in flight while it runs.
  if (slots_.InFlight() > 0) return;
  const uint32_t index =
      slots_.Take({.op = IoOp::kFsync, .start_ns = now, .issue_ns = now, .measured = !ramping_});
  if (auto queued = engine_.Queue({.op = IoOp::kFsync, .buffer_index = index, .tag = index});
      !queued) {
    slots_.Untake(index);
    Fail(std::move(queued.error()));
    return;
  }
  fsync_pending_ = false;
  fsync_in_flight_ = true;
  slots_.AddToBatch(index);
  SubmitBatch();
}

// Takes a slot for the next I/O in direction `dir` and queues it in the
// batch; false when the engine refused it (the run has failed).
bool Runner::QueueIo(int dir, uint64_t now) {
  const auto block_size = static_cast<uint32_t>(spec_.block_size);
  const IoOp op = dir == 0 ? IoOp::kRead : IoOp::kWrite;
  const uint64_t offset = generators_[dir].Next();
  const uint32_t index = slots_.Take({.op = op,
                                      .length = block_size,
                                      .offset = offset,
                                      .start_ns = now,
                                      .issue_ns = now,
                                      .measured = !ramping_});
  if (auto queued = engine_.Queue(
          {.op = op, .offset = offset, .length = block_size, .buffer_index = index, .tag = index});
      !queued) {
    slots_.Untake(index);
    Fail(std::move(queued.error()));
    return false;
  }
  slots_.AddToBatch(index);
  return true;
}

void Runner::SubmitBatch() {
  batched_ = 0;
  auto submitted = engine_.Submit();
  if (!submitted) {
    // Assume nothing of this batch started: waiting for it could only end at
    // the hard limit.
    if (slots_.BatchFailed()) fsync_in_flight_ = false;
    Fail(std::move(submitted.error()));
    return;
  }
  // Sync engines did the I/O inside Submit, so their issue time stays the
  // start time and they record no slat, as fio's sync engines.
  // A partial submission (the ring was full, or a kernel without SUBMIT_ALL
  // stopped early) leaves the rest in the batch, submitted next time: counting
  // it in flight would wait for completions that cannot come.
  slots_.BatchSubmitted(*submitted, synchronous_ ? std::nullopt : std::optional(clock_.NowNs()));
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
  const std::optional<Slot> completed = slots_.Complete(completion.tag);
  if (!completed) {
    Fail(MakeError(ErrorCode::kIo, fmt::format("{} engine: completion of no I/O in flight (tag {})",
                                               engine_.Name(), completion.tag))
             .error());
    abandoned_ = true;  // the in-flight count can no longer be trusted
    return;
  }
  const Slot& slot = *completed;

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
  progress_.CountDone(dir, bytes);
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

RunPosition Runner::Position() const {
  return RunPosition{.ramping = ramping_,
                     .ramp_end_ns = run_start_ns_ + limits_.ramp_ns,
                     .measured_start_ns = measured_start_ns_,
                     .runtime_ns = limits_.runtime_ns,
                     .ios_limit = limits_.ios,
                     .measured_issued = measured_issued_};
}

}  // namespace

Result<ProbeResult> RunJob(const JobSpec& spec, ProbeEngine& engine, const RunTarget& target,
                           const RunOptions& options) {
  if (auto valid = ValidateRun(spec, target); !valid) return ErrorOf(valid);
  auto buffers = IoBuffers::Allocate(spec.iodepth, spec.block_size, target.memory_alignment);
  if (!buffers) return ErrorOf(buffers);
  if (auto opened = engine.Open(EngineTarget{target.fd, buffers->Spans()}, spec.iodepth); !opened) {
    return ErrorOf(opened);
  }
  // After the engine registered the buffers (see io_buffers.cc), and only
  // when the data will be written: a read overwrites it, as in fio.
  if (WritesData(spec.rw)) {
    buffers->Fill(SeedsFromBase(spec.randseed.value_or(kDefaultRandSeed)).buffer_fill);
  }
  SteadyProbeClock steady_clock;
  ProbeClock& clock = options.clock != nullptr ? *options.clock : steady_clock;
  ProbeResult result = Runner(spec, engine, target, options, clock).Run();
  const auto fallbacks = engine.Fallbacks();
  result.fallbacks.assign(fallbacks.begin(), fallbacks.end());
  // Close before the buffers go: an async engine may still own hung I/Os,
  // and what it gave up on keeps its buffers for good.
  engine.Close();
  result.abandoned_ios = engine.AbandonedIos();
  if (result.abandoned_ios > 0) {
    auto context = engine.TakeAbandoned();
    if (options.keep_abandoned && context) {
      options.keep_abandoned(
          std::make_unique<HeldIo>(std::move(context), std::move(*buffers), result.abandoned_ios));
    } else {
      buffers->Leak();
    }
  }
  return result;
}

}  // namespace iowatch::probes
