#include "cli/trace/traced_child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace iowatch::daemon {
namespace {

constexpr char kLibraryName[] = "libiowatch-trace.so";

std::string PreloadValue(const std::string& library) {
  const char* existing = std::getenv("LD_PRELOAD");
  if (existing == nullptr || *existing == '\0') return library;
  return library + ":" + existing;
}

// In the child, between fork and exec: only async-signal-safe calls. An
// exec that fails writes its errno into the close-on-exec pipe, which an
// exec that succeeds closes empty.
[[noreturn]] void ExecTraced(char** argv, char** environment, int error_pipe) {
  execvpe(argv[0], argv, environment);
  const int error = errno;
  (void)write(error_pipe, &error, sizeof error);
  _exit(127);
}

// The exec's errno from the pipe, 0 when the exec succeeded.
int ExecError(int error_pipe) {
  int error = 0;
  ssize_t n = 0;
  do {
    n = read(error_pipe, &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof error) ? error : 0;
}

}  // namespace

Result<std::string> FindTraceLibrary(const std::string& given) {
  std::error_code ec;
  if (!given.empty()) {
    auto path = std::filesystem::canonical(given, ec);
    if (ec) return ErrnoError(ec.value(), "cannot use the trace library", given);
    return path.string();
  }
  const auto binary = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ErrnoError(ec.value(), "cannot find the running binary", "/proc/self/exe");
  const auto dir = binary.parent_path();
  for (const auto& candidate :
       {dir / kLibraryName, dir / ".." / "lib" / "iowatch" / kLibraryName}) {
    if (std::filesystem::exists(candidate, ec))
      return std::filesystem::canonical(candidate, ec).string();
  }
  return MakeError(ErrorCode::kNotFound,
                   fmt::format("{} is neither beside {} nor in {}: give --library", kLibraryName,
                               binary.string(), (dir.parent_path() / "lib" / "iowatch").string()));
}

Result<int> RunTracedCommand(const std::vector<std::string>& command, const std::string& library,
                             const std::string& json_path, bool time_calls) {
  // The child's environment: ours, with the preload and the output set.
  std::vector<std::string> variables;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("LD_PRELOAD=") || entry.starts_with("IOWATCH_TRACE_OUTPUT=") ||
        entry.starts_with("IOWATCH_TRACE_REPORT=") || entry.starts_with("IOWATCH_TRACE_TIMES=") ||
        entry.starts_with("IOWATCH_TRACE_STARTS=")) {
      continue;
    }
    variables.emplace_back(entry);
  }
  variables.push_back("LD_PRELOAD=" + PreloadValue(library));
  variables.push_back("IOWATCH_TRACE_OUTPUT=" + json_path);
  variables.emplace_back("IOWATCH_TRACE_STARTS=1");  // a line per process start: who wrote none
  if (!time_calls) variables.emplace_back("IOWATCH_TRACE_TIMES=0");
  std::vector<char*> environment;
  environment.reserve(variables.size() + 1);
  for (std::string& v : variables) environment.push_back(v.data());
  environment.push_back(nullptr);
  std::vector<std::string> words = command;
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return ErrnoError(errno, "cannot make a pipe", {});

  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGTERM, &ignore, &old_term);
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    close(error_pipe[0]);
    ExecTraced(argv.data(), environment.data(), error_pipe[1]);
  }
  const int fork_error = errno;
  close(error_pipe[1]);
  const int exec_error = pid < 0 ? 0 : ExecError(error_pipe[0]);
  close(error_pipe[0]);
  if (pid < 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    return ErrnoError(fork_error, "cannot fork to run the command", {});
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError(errno, "cannot wait for the command", {});
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (exec_error != 0) return ErrnoError(exec_error, "cannot run the command", command[0]);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace iowatch::daemon
