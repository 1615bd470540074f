#include "collectors/smart/smartctl_run.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

extern char** environ;

namespace iowatch::collectors {

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
