#include "probes/pipeline/parent_death.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

namespace iowatch::probes {
namespace {

// What the grandchild wrote on `fd` until it closed it (it exited), or
// "timeout" after 10 s.
std::string ReadUntilClosed(int fd) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char c = 0;
    const ssize_t n = read(fd, &c, 1);
    if (n == 0) return got;
    if (n == 1) got += c;
  }
  return got + "timeout";
}

// Forks a middle process that forks `grandchild(middle_pid, report_fd)` and
// exits (after the grandchild's `ready` byte when `wait_ready`); returns what
// the grandchild reported.
template <typename F>
std::string Orphaned(F grandchild, bool wait_ready) {
  int report[2];
  int ready[2];
  EXPECT_EQ(pipe(report), 0);
  EXPECT_EQ(pipe(ready), 0);
  const pid_t middle = fork();
  if (middle == 0) {
    const pid_t self = getpid();
    if (fork() == 0) {
      close(report[0]);
      close(ready[0]);
      grandchild(self, report[1], ready[1]);
      _exit(0);
    }
    char c = 0;
    close(ready[1]);
    if (wait_ready) (void)!read(ready[0], &c, 1);
    _exit(0);
  }
  close(report[1]);
  close(ready[0]);
  close(ready[1]);
  int status = 0;
  waitpid(middle, &status, 0);
  std::string got = ReadUntilClosed(report[0]);
  close(report[0]);
  return got;
}

// The race PR_SET_PDEATHSIG alone loses: the parent is gone before the
// child asks, so no signal ever comes and the clone would run for no one.
TEST(ExitWithParent, AChildWhoseParentDiedBeforeItAskedExitsAtOnce) {
  const std::string got = Orphaned(
      [](pid_t parent, int report, int /*ready*/) {
        for (int i = 0; i < 5000 && getppid() == parent; ++i) usleep(1000);
        ExitWithParent(parent, SIGKILL, 3);
        (void)!write(report, "ran", 3);  // what an orphaned clone would do
      },
      false);
  EXPECT_EQ(got, "");
}

TEST(ExitWithParent, AChildWhoseParentDiesLaterIsSignalled) {
  const std::string got = Orphaned(
      [](pid_t parent, int report, int ready) {
        ExitWithParent(parent, SIGKILL, 3);
        (void)!write(report, "R", 1);
        close(ready);  // the middle process exits now
        for (int i = 0; i < 5000; ++i) usleep(1000);
        (void)!write(report, "ran", 3);
      },
      true);
  EXPECT_EQ(got, "R");
}

TEST(ExitWithParent, AChildWhoseParentLivesRunsOn) {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    ExitWithParent(parent, SIGKILL, 3);
    _exit(7);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
}

}  // namespace
}  // namespace iowatch::probes
