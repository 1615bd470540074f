#include "probes/pipeline/run_job_set.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "probes/pipeline/parent_death.h"
#include "probes/run/progress_board.h"
#include "probes/run/result_wire.h"

namespace iowatch::probes {
namespace {

using std::chrono::milliseconds;

// A clone process's stop flag: its SIGTERM (sent by the parent on cancel)
// and SIGINT (a terminal's ^C reaches the whole process group) set it.
std::atomic<bool> g_clone_stop{false};
extern "C" void StopClone(int /*signal*/) { g_clone_stop.store(true); }

struct CloneRun {
  size_t job = 0;
  uint32_t jobnum = 0;
  JobSpec spec;
  PreparedTarget target;
  size_t slot = 0;  // on the progress board
  bool as_process = false;
  int64_t start_unix_ms = 0;
  std::thread thread;
  pid_t pid = -1;
  int pipe_fd = -1;  // the read end, until EOF
  std::vector<uint8_t> received;
  // Empty until the clone ends (or fails to start). Not a default
  // ProbeResult: that holds four 16 KiB histograms, and every fork copies
  // the parent's page tables, so 4,000 clones' worth of them made starting
  // the clones quadratic (60 s and 804 MB for 4,000 jobs; docs/benchmarks.md,
  // "`iowatch probe` against fio 3.33").
  std::optional<Result<ProbeResult>> result;
};

// `measuring` (threads only) tells the caller at once; a process's mark is
// seen by the caller's next look at the board.
RunOptions CloneRunOptions(ProgressBoard& board, size_t slot, const std::atomic<bool>* cancel,
                           const JobSetRunOptions& options,
                           const std::function<void()>& measuring = {}) {
  RunOptions run;
  run.cancel = cancel;
  run.hard_limit = options.hard_limit;
  run.on_progress = [&board, slot](const RunProgress& p) { board.Post(slot, p); };
  run.on_measuring = [&board, slot, measuring] {
    board.MarkMeasuring(slot);
    if (measuring) measuring();
  };
  return run;
}

// options.on_measuring, once, from whichever clone or look comes first.
class MeasuringOnce {
 public:
  explicit MeasuringOnce(const JobSetRunOptions& options) : options_(options) {}
  void Tell() {
    std::call_once(once_, [this] {
      if (options_.on_measuring) options_.on_measuring();
    });
  }

 private:
  const JobSetRunOptions& options_;
  std::once_flag once_;
};

void WriteAll(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nobody to tell
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

// SIGTERM and SIGINT, which stop a clone process.
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// Runs with the stop signals blocked (StartProcess forks so): one that
// arrives before the handler is in place waits for it instead of killing
// the clone with nothing reported.
[[noreturn]] void RunCloneProcess(CloneRun& clone, ProgressBoard& board, int write_fd,
                                  const JobSetRunOptions& options, pid_t parent,
                                  const sigset_t& mask_before) {
  // An orphaned clone stops (with SIGTERM's handler below), or never starts.
  ExitWithParent(parent, SIGTERM, 1);
  struct sigaction action {};
  action.sa_handler = StopClone;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  pthread_sigmask(SIG_SETMASK, &mask_before, nullptr);
  const Result<ProbeResult> result = RunOnTarget(
      clone.spec, clone.target, CloneRunOptions(board, clone.slot, &g_clone_stop, options));
  WriteAll(write_fd, EncodeResult(result));
  board.MarkDone(clone.slot);
  _exit(0);
}

Status StartProcess(CloneRun& clone, ProgressBoard& board, const JobSetRunOptions& options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(errno, "cannot make a clone's pipe", "");
  const pid_t parent = getpid();
  const sigset_t stop_signals = StopSignals();
  sigset_t mask_before;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &mask_before);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    RunCloneProcess(clone, board, fds[1], options, parent, mask_before);
  }
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &mask_before, nullptr);
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return ErrnoError(fork_errno, "cannot fork a clone", "");
  }
  close(fds[1]);
  clone.pid = pid;
  clone.pipe_fd = fds[0];
  return {};
}

void StartThread(CloneRun& clone, ProgressBoard& board, const JobSetRunOptions& options,
                 MeasuringOnce& measuring) {
  clone.thread = std::thread([&clone, &board, &options, &measuring] {
    clone.result = RunOnTarget(clone.spec, clone.target,
                               CloneRunOptions(board, clone.slot, options.cancel, options,
                                               [&measuring] { measuring.Tell(); }));
    board.MarkDone(clone.slot);
  });
}

// Reads what a clone process sent so far; closes the pipe at EOF.
void Drain(CloneRun& clone) {
  uint8_t buffer[4096];
  for (;;) {
    const ssize_t n = read(clone.pipe_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      clone.received.insert(clone.received.end(), buffer, buffer + n);
      if (static_cast<size_t>(n) == sizeof buffer) continue;
      return;
    }
    close(clone.pipe_fd);  // EOF, or an error: either way nothing more comes
    clone.pipe_fd = -1;
    return;
  }
}

bool Running(const CloneRun& clone, const ProgressBoard& board) {
  return clone.as_process ? clone.pipe_fd >= 0 : !board.Done(clone.slot);
}

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

void FinishProcess(CloneRun& clone) {
  int status = 0;
  while (waitpid(clone.pid, &status, 0) < 0 && errno == EINTR) {
  }
  auto decoded = DecodeResult(clone.received, clone.spec);
  if (decoded) {
    clone.result = std::move(*decoded);
    return;
  }
  Error error = decoded.error();
  error.message += " (the clone process: " + DescribeExit(status) + ")";
  clone.result = std::unexpected(std::move(error));
}

// The caller's loop while a phase runs: pipes drained, the first measuring
// clone and the cancel flag passed on, progress about every second.
class PhaseWatch {
 public:
  PhaseWatch(std::vector<CloneRun>& clones, ProgressBoard& board, const JobSetRunOptions& options,
             MeasuringOnce& measuring)
      : clones_(clones), board_(board), options_(options), measuring_(measuring) {}

  void UntilDone() {
    auto next_progress = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (AnyRunning()) {
      WaitForPipes(milliseconds(10));
      if (board_.AnyMeasuring()) measuring_.Tell();
      ForwardCancel();
      if (options_.on_progress && std::chrono::steady_clock::now() >= next_progress) {
        options_.on_progress(board_.Total());
        next_progress += std::chrono::seconds(1);
      }
    }
  }

 private:
  bool AnyRunning() const {
    return std::ranges::any_of(clones_, [&](const CloneRun& c) { return Running(c, board_); });
  }

  void WaitForPipes(milliseconds timeout) {
    std::vector<pollfd> fds;
    std::vector<CloneRun*> owners;
    for (CloneRun& clone : clones_) {
      if (clone.pipe_fd < 0) continue;
      fds.push_back({clone.pipe_fd, POLLIN, 0});
      owners.push_back(&clone);
    }
    if (poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) <= 0) return;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) Drain(*owners[i]);
    }
  }

  void ForwardCancel() {
    if (cancel_forwarded_ || options_.cancel == nullptr || !options_.cancel->load()) return;
    cancel_forwarded_ = true;
    for (const CloneRun& clone : clones_) {
      if (clone.as_process && clone.pipe_fd >= 0) kill(clone.pid, SIGTERM);
    }
  }

  std::vector<CloneRun>& clones_;
  ProgressBoard& board_;
  const JobSetRunOptions& options_;
  MeasuringOnce& measuring_;
  bool cancel_forwarded_ = false;
};

struct PhaseJobs {
  size_t first = 0;  // index into JobSet::jobs
  size_t end = 0;
};

std::vector<PhaseJobs> Phases(const JobSet& set) {
  std::vector<PhaseJobs> phases;
  for (size_t i = 0; i < set.jobs.size(); ++i) {
    if (phases.empty() || set.jobs[i].phase != set.jobs[phases.back().first].phase) {
      phases.push_back({i, i});
    }
    phases.back().end = i + 1;
  }
  return phases;
}

bool Cancelled(const JobSetRunOptions& options) {
  return options.cancel != nullptr && options.cancel->load();
}

class SetRunner {
 public:
  SetRunner(const JobSet& set, const JobSetRunOptions& options, ProgressBoard& board)
      : set_(set), options_(options), board_(board), measuring_(options) {}

  Status RunPhase(PhaseJobs phase, std::vector<CloneOutcome>& outcomes) {
    std::vector<CloneRun> clones;
    if (auto ok = Prepare(phase, clones); !ok) return ok;
    if (Cancelled(options_)) return {};
    const bool alone = clones.size() == 1 && set_.jobs.size() == 1;
    // Processes first: a fork while this process runs threads of its own
    // would copy locks held by them.
    for (CloneRun& clone : clones) {
      clone.as_process = !alone && !options_.force_threads && !clone.spec.thread;
      clone.start_unix_ms = WallUnixMs();
      if (!clone.as_process) continue;
      if (auto ok = StartProcess(clone, board_, options_); !ok) {
        clone.as_process = false;
        clone.result = std::unexpected(ok.error());
        board_.MarkDone(clone.slot);
      }
    }
    for (CloneRun& clone : clones) {
      if (!clone.as_process && !clone.result) StartThread(clone, board_, options_, measuring_);
    }
    PhaseWatch(clones, board_, options_, measuring_).UntilDone();
    for (CloneRun& clone : clones) {
      if (clone.thread.joinable()) clone.thread.join();
      if (clone.as_process) FinishProcess(clone);
      outcomes.push_back(Outcome(clone));
    }
    return {};
  }

 private:
  Status Prepare(PhaseJobs phase, std::vector<CloneRun>& clones) {
    size_t count = 0;
    for (size_t j = phase.first; j < phase.end; ++j) count += set_.jobs[j].spec.numjobs;
    clones.reserve(count);  // the clones' threads hold references: no reallocation
    for (size_t j = phase.first; j < phase.end; ++j) {
      for (uint32_t n = 0; n < set_.jobs[j].spec.numjobs; ++n) {
        CloneRun& clone = clones.emplace_back();
        clone.job = j;
        clone.jobnum = n;
        clone.spec = set_.jobs[j].spec;
        clone.spec.jobnum = n;
        clone.spec.thread_number = next_thread_;
        clone.slot = next_thread_++;
        if (auto ok = PrepareOne(clone); !ok) return ok;
      }
    }
    return {};
  }

  Status PrepareOne(CloneRun& clone) {
    if (options_.create_directory && !clone.spec.directory.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(clone.spec.directory, ec);
      if (ec) {
        return MakeError(ErrorCode::kIo, "cannot create the job's directory: " + ec.message(),
                         clone.spec.directory);
      }
    }
    Result<PreparedTarget> target = PrepareTarget(clone.spec, options_.policy, options_.cancel);
    if (!target) return ErrorOf(target);
    clone.target = std::move(*target);
    if (options_.on_prepared) options_.on_prepared(clone.target.device);
    return {};
  }

  static CloneOutcome Outcome(CloneRun& clone) {
    CloneOutcome out{clone.job, clone.jobnum, {}};
    out.outcome.target_path = clone.target.path;
    out.outcome.device = clone.target.device;
    out.outcome.start_unix_ms = clone.start_unix_ms;
    if (!clone.result) clone.result = MakeError(ErrorCode::kIo, "the clone did not report");
    if (*clone.result) {
      out.outcome.result = std::move(**clone.result);
    } else {
      out.outcome.result.end = RunEnd::kFailed;
      out.outcome.result.error = clone.result->error();
    }
    out.outcome.result.spec = clone.spec;
    return out;
  }

  const JobSet& set_;
  const JobSetRunOptions& options_;
  ProgressBoard& board_;
  MeasuringOnce measuring_;
  uint32_t next_thread_ = 0;
};

}  // namespace

Result<std::vector<CloneOutcome>> RunJobSet(const JobSet& set, const JobSetRunOptions& options) {
  Result<ProgressBoard> board = ProgressBoard::Create(set.Clones());
  if (!board) return ErrorOf(board);
  SetRunner runner(set, options, *board);
  std::vector<CloneOutcome> outcomes;
  for (const PhaseJobs phase : Phases(set)) {
    if (Cancelled(options)) break;
    if (auto ok = runner.RunPhase(phase, outcomes); !ok) return ErrorOf(ok);
  }
  return outcomes;
}

}  // namespace iowatch::probes
