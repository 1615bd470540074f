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
#include <string>
#include <utility>
#include <vector>

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

// The batch a helper reads (its own copy of this process's memory after
// fork(): nothing else touches it there).
char batch[StatfsHelpers::kBatchBytes + 1];

// The helper's life, after fork() in a threaded process: system calls only
// (no allocation, no lock another thread may have held), until the socket
// closes or an answer cannot be sent. A message is paths, each ended by a
// NUL; each is answered in turn.
[[noreturn]] void Serve(int socket) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
  CloseAllBut(socket);
  for (;;) {
    const ssize_t n = ::recv(socket, batch, StatfsHelpers::kBatchBytes, 0);
    if (n <= 0) ::_exit(0);
    batch[n] = '\0';
    for (const char* path = batch; path < batch + n; path += ::strlen(path) + 1) {
      Reply reply;
      if (::statfs(path, &reply.figures) != 0) reply.error = errno;
      if (::send(socket, &reply, sizeof reply, MSG_NOSIGNAL) != sizeof reply) ::_exit(0);
    }
  }
}

// Whether a helper can take `path`: statfs takes no longer one, nor a NUL inside.
bool Sendable(const std::string& path) {
  return path.size() <= PATH_MAX - 1 && path.find('\0') == std::string::npos;
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

void StatfsHelpers::ReadAll(std::span<const std::string> paths,
                            const FilesystemUsageAnswer& answer) {
  size_t i = 0;
  while (i < paths.size()) {
    if (!Sendable(paths[i])) {
      if (!answer(i, MakeError(ErrorCode::kInvalidArgument, "a mount point statfs cannot take",
                               paths[i]))) {
        return;
      }
      ++i;
      continue;
    }
    // The paths from i a message holds; one statfs cannot take ends it (the
    // answers keep the paths' order).
    std::string message;
    std::vector<size_t> indices;
    for (; i < paths.size() && Sendable(paths[i]) &&
           message.size() + paths[i].size() + 1 <= kBatchBytes;
         ++i) {
      message.append(paths[i]).push_back('\0');
      indices.push_back(i);
    }
    if (!AskHelper(message, indices, paths, answer)) return;
  }
}

bool StatfsHelpers::AskHelper(const std::string& message, std::span<const size_t> indices,
                              std::span<const std::string> paths,
                              const FilesystemUsageAnswer& answer) {
  auto helper = TakeIdle();
  bool wanted = true;
  if (!helper) {
    for (const size_t i : indices) {
      Error error = helper.error();
      error.path = paths[i];
      wanted = wanted && answer(i, std::unexpected(std::move(error)));
    }
    return wanted;
  }
  const bool asked = ::send(helper->socket, message.data(), message.size(), MSG_NOSIGNAL) ==
                     static_cast<ssize_t>(message.size());
  // Every reply of the message is read, wanted or not: the helper then
  // starts the next message in step.
  for (size_t k = 0; k < indices.size(); ++k) {
    Reply reply;
    ssize_t got = -1;
    if (asked) {
      do {
        got = ::recv(helper->socket, &reply, sizeof reply, 0);
      } while (got < 0 && errno == EINTR);
    }
    if (got != sizeof reply) {
      const int err = got < 0 ? errno : EPIPE;  // gone: killed, or out of memory
      Retire(*helper);
      for (; k < indices.size() && wanted; ++k) {
        wanted = answer(indices[k],
                        ErrnoError(err, "the statfs helper did not answer", paths[indices[k]]));
      }
      return wanted;
    }
    if (wanted) wanted = answer(indices[k], UsageOf(reply, paths[indices[k]]));
  }
  GiveBack(*helper);
  return wanted;
}

Result<FilesystemUsage> StatfsHelpers::Read(const std::string& path) {
  Result<FilesystemUsage> out = std::unexpected(Error::Io("statfs was not answered", path));
  ReadAll(std::span(&path, 1), [&out](size_t, Result<FilesystemUsage> usage) {
    out = std::move(usage);
    return true;
  });
  return out;
}

FilesystemUsageBatchReader HelperUsageReader(std::shared_ptr<StatfsHelpers> helpers) {
  return [helpers = std::move(helpers)](std::span<const std::string> paths,
                                        const FilesystemUsageAnswer& answer) {
    helpers->ReadAll(paths, answer);
  };
}

}  // namespace iowatch::collectors
