#include "collectors/smart/smartctl_run.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

extern char** environ;

namespace iowatch::collectors {
namespace {

// SMART's capabilities: SG_IO pass-through (ATA, SCSI) and NVMe admin commands.
constexpr int kSmartCaps[] = {CAP_SYS_RAWIO, CAP_SYS_ADMIN};
constexpr uint32_t kSmartMask = (1U << CAP_SYS_RAWIO) | (1U << CAP_SYS_ADMIN);  // both in word 0

struct Caps {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
};

bool Get(Caps& caps) { return ::syscall(SYS_capget, &caps.header, caps.data) == 0; }

// Raised as ambient in this thread (capabilities are per thread), for the
// child spawned next; lowered again when it goes out of scope.
class AmbientForChild {
 public:
  AmbientForChild() {
    Caps caps;
    if (::geteuid() == 0 || !Get(caps)) return;
    for (const int cap : kSmartCaps) {
      const uint32_t bit = 1U << cap;
      if ((caps.data[0].permitted & caps.data[0].inheritable & bit) == 0) continue;
      if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) == 0) raised_ |= bit;
    }
  }
  ~AmbientForChild() {
    for (const int cap : kSmartCaps) {
      if ((raised_ & (1U << cap)) != 0) ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, cap, 0, 0);
    }
  }
  AmbientForChild(const AmbientForChild&) = delete;
  AmbientForChild& operator=(const AmbientForChild&) = delete;

 private:
  uint32_t raised_ = 0;
};

}  // namespace

std::string HoldSmartctlCapabilities() {
  Caps caps;
  if (::geteuid() == 0 || !Get(caps)) return "";
  __user_cap_data_struct& d = caps.data[0];
  if ((d.effective & kSmartMask) == 0) return "";
  d.effective &= ~kSmartMask;
  d.inheritable |= d.permitted & kSmartMask;
  if (::syscall(SYS_capset, &caps.header, caps.data) != 0) {
    return std::string(
               "cannot keep CAP_SYS_RAWIO and CAP_SYS_ADMIN out of the effective set: "
               "capset: ") +
           ErrnoText(errno);
  }
  // Ambient capabilities pass to every child: smartctl's get them at its start.
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return "CAP_SYS_RAWIO and CAP_SYS_ADMIN held for smartctl, out of the daemon's effective set";
}

Result<std::unique_ptr<SmartctlRun>> SmartctlRun::Start(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return ErrnoError(errno, "cannot make a pipe for", argv[0]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // A group of its own (its id the child's pid): Kill reaches whatever it
  // started too, which would otherwise outlive the daemon.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const AmbientForChild caps;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    return ErrnoError(rc, "cannot run", argv[0]);
  }
  ::fcntl(pipe_fds[0], F_SETFL, ::fcntl(pipe_fds[0], F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<SmartctlRun>(new SmartctlRun(pid, pipe_fds[0]));
}

SmartctlRun::~SmartctlRun() {
  ::close(fd_);
  if (!reaped_) {
    Kill();
    // Gone already, or a zombie until the daemon exits: never waited for.
    ::waitpid(pid_, nullptr, WNOHANG);
  }
}

void SmartctlRun::Drain() {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n > 0) {
      const size_t room = kMaxOutputBytes - std::min(output_.size(), kMaxOutputBytes);
      output_.append(buffer, std::min(static_cast<size_t>(n), room));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN (more later), or EOF
  }
}

std::optional<SmartctlRun::Finished> SmartctlRun::Poll() {
  Drain();
  if (reaped_) return std::nullopt;
  // Exited, not yet reaped (WNOWAIT): its pid, the group's id, is still
  // its own, so the group's leftovers are killed before it is reaped.
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid_) {
    return std::nullopt;
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  reaped_ = true;
  Drain();  // what it wrote just before it exited
  return Finished{std::move(output_), WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

void SmartctlRun::Kill() {
  if (!reaped_) ::kill(-pid_, SIGKILL);
}

}  // namespace iowatch::collectors
