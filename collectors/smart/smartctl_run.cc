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
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
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
    ::kill(pid_, SIGKILL);
    // A killed process is gone within milliseconds, unless it is stuck in
    // the kernel: then it stays a zombie until the daemon exits (one per
    // disk that hangs at most), rather than hold this thread.
    for (int i = 0; i < 100 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) ::usleep(1000);
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
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  reaped_ = true;
  Drain();  // what it wrote just before it exited
  return Finished{std::move(output_), WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

void SmartctlRun::Kill() {
  if (!reaped_) ::kill(pid_, SIGKILL);
}

}  // namespace iowatch::collectors
