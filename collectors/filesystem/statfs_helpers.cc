#include "collectors/filesystem/statfs_helpers.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace iowatch::collectors {
namespace {

// One answer: statfs's figures, or its errno (the same program on both
// ends: the struct's layout is the same).
struct Reply {
  int error = 0;
  struct statfs figures {};
};

// Closes every descriptor but `keep` (the child holds nothing of iowatch's:
// not its listening socket, not its store).
void CloseAllBut(int keep) {
  if (keep > 0) ::close_range(0, static_cast<unsigned>(keep) - 1, 0);
  ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
}

// The helper's life, after fork() in a threaded process: system calls only
// (no allocation, no lock another thread may have held), until the socket
// closes or the answer cannot be sent.
[[noreturn]] void Serve(int socket) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
  CloseAllBut(socket);
  char path[PATH_MAX + 1];
  for (;;) {
    const ssize_t n = ::recv(socket, path, PATH_MAX, 0);
    if (n <= 0) ::_exit(0);
    path[n] = '\0';
    Reply reply;
    if (::statfs(path, &reply.figures) != 0) reply.error = errno;
    if (::send(socket, &reply, sizeof reply, MSG_NOSIGNAL) != sizeof reply) ::_exit(0);
  }
}

Result<FilesystemUsage> UsageOf(const Reply& r, const std::string& path) {
  if (r.error != 0) return ErrnoError(r.error, "statfs of the mount point failed", path);
  return UsageOfStatfs(r.figures);
}

}  // namespace

StatfsHelpers::~StatfsHelpers() {
  std::lock_guard lock(mutex_);
  for (const Helper& h : idle_) {
    ::close(h.socket);  // an idle helper exits on it
    ::waitpid(h.pid, nullptr, 0);
  }
  for (const pid_t pid : retired_) ::waitpid(pid, nullptr, WNOHANG);
}

size_t StatfsHelpers::Spawned() const {
  std::lock_guard lock(mutex_);
  return spawned_;
}

Result<StatfsHelpers::Helper> StatfsHelpers::TakeIdle() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      const Helper h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return ErrnoError(errno, "making a statfs helper's socket", "");
  }
  const pid_t pid = ::fork();
  if (pid == 0) Serve(pair[1]);
  ::close(pair[1]);
  if (pid < 0) {
    const int err = errno;
    ::close(pair[0]);
    return ErrnoError(err, "starting a statfs helper (fork)", "");
  }
  std::lock_guard lock(mutex_);
  ++spawned_;
  return Helper{pid, pair[0]};
}

void StatfsHelpers::GiveBack(Helper helper) {
  std::lock_guard lock(mutex_);
  idle_.push_back(helper);
}

void StatfsHelpers::Retire(Helper helper) {
  ::close(helper.socket);
  std::lock_guard lock(mutex_);
  retired_.push_back(helper.pid);
  std::erase_if(retired_, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
}

Result<FilesystemUsage> StatfsHelpers::Read(const std::string& path) {
  if (path.size() > PATH_MAX - 1 || path.find('\0') != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "a mount point statfs cannot take", path);
  }
  auto helper = TakeIdle();
  if (!helper) return ErrorOf(helper);
  Reply reply;
  const bool asked = ::send(helper->socket, path.data(), path.size(), MSG_NOSIGNAL) ==
                     static_cast<ssize_t>(path.size());
  ssize_t got = -1;
  if (asked) {
    do {
      got = ::recv(helper->socket, &reply, sizeof reply, 0);
    } while (got < 0 && errno == EINTR);
  }
  if (got != sizeof reply) {
    const int err = got < 0 ? errno : EPIPE;  // gone: killed, or out of memory
    Retire(*helper);
    return ErrnoError(err, "the statfs helper did not answer", path);
  }
  GiveBack(*helper);
  return UsageOf(reply, path);
}

FilesystemUsageReader HelperUsageReader(std::shared_ptr<StatfsHelpers> helpers) {
  return [helpers = std::move(helpers)](const std::string& path) { return helpers->Read(path); };
}

}  // namespace iowatch::collectors
