// Test code run in a forked child, for what must neither outlive a test nor
// leak into the test process: a lowered rlimit, a dropped capability, a
// seccomp filter, a private mount. The child reports through its exit code:
// 0 passed, kSkipExit the environment refused the set-up, anything else
// failed (CHILD_CHECK prints which check). Used by the probe engine and
// target tests.
// Thread-safety: fork from a single-threaded test only.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <optional>

namespace iowatch::test {

inline constexpr int kSkipExit = 77;

// Child-side check: prints what failed and makes the child exit non-zero.
#define CHILD_CHECK(condition)                                                      \
  do {                                                                              \
    if (!(condition)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

// Runs `setup`, then `body`, in a forked child; `setup` returning false
// exits with kSkipExit. Returns the child's exit code, or 128 + the signal
// that ended it.
inline int InChild(const std::function<bool()>& setup, const std::function<int()>& body) {
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int code = setup() ? body() : kSkipExit;
    fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// In the calling process (a child): makes the system call `number` fail
// with `error`, only when its second argument is `arg1` if given. Needs no
// privilege (PR_SET_NO_NEW_PRIVS); false when the kernel refuses the filter.
inline bool DenySyscall(uint32_t number, int error, std::optional<uint32_t> arg1 = std::nullopt) {
  const auto deny = static_cast<uint32_t>(SECCOMP_RET_ERRNO | static_cast<uint32_t>(error));
  const sock_filter any_argument = BPF_STMT(BPF_JMP | BPF_JA, 0);  // on to deny
  const sock_filter check_argument = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arg1.value_or(0), 0, 1);
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, number, 0, 3),                    // else allow
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),  // its low 32 bits
      arg1 ? check_argument : any_argument,
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

}  // namespace iowatch::test
