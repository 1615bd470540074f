// statfs in helper processes: the same figures as statvfs(3) in this
// process, errors named with the path, one helper for a run of calls and
// one per concurrent caller, a helper that died replaced, and no helper left
// running or unreaped once the helpers are destroyed.
#include "collectors/filesystem/statfs_helpers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace iowatch::collectors {
namespace {

// Children of this process (reaped or not), from /proc.
std::vector<pid_t> Children() {
  std::vector<pid_t> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t pid = 0; children >> pid;) out.push_back(pid);
  }
  return out;
}

TEST(StatfsHelpers, TheFiguresStatvfsGivesInThisProcess) {
  StatfsHelpers helpers;
  for (const char* path : {"/", "/proc", "/dev"}) {
    struct statvfs s {};
    ASSERT_EQ(::statvfs(path, &s), 0) << path;
    const auto usage = helpers.Read(path);
    ASSERT_TRUE(usage) << usage.error().ToString();
    EXPECT_EQ(usage->size_bytes, s.f_blocks * s.f_frsize) << path;
    EXPECT_EQ(usage->files, s.f_files) << path;
  }
  EXPECT_EQ(helpers.Spawned(), 1u);  // one helper answered them all
}

TEST(StatfsHelpers, AnErrorNamesThePathAndErrno) {
  StatfsHelpers helpers;
  const auto missing = helpers.Read("/nonexistent/iowatch-statfs-test");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().path, "/nonexistent/iowatch-statfs-test");
  EXPECT_EQ(missing.error().os_errno, ENOENT);
  EXPECT_FALSE(helpers.Read(std::string("/\0x", 3)));  // never reaches a helper
  EXPECT_TRUE(helpers.Read("/"));                      // the helper outlives an error
  EXPECT_EQ(helpers.Spawned(), 1u);
}

TEST(StatfsHelpers, ABatchIsAnsweredInItsOrderByOneHelperOverSeveralMessages) {
  // 40 paths of about 2 KiB ("/./././..." is "/"): more than one message holds.
  std::vector<std::string> paths;
  for (int i = 0; i < 40; ++i) {
    std::string path = "/";
    for (int k = 0; k < 1000 + i; ++k) path += "./";
    paths.push_back(path);
  }
  paths[7] = std::string("/\0x", 3);  // statfs cannot take it: answered in its turn
  paths[20] = "/nonexistent/iowatch-statfs-test";
  size_t total = 0;
  for (const auto& p : paths) total += p.size() + 1;
  ASSERT_GT(total, StatfsHelpers::kBatchBytes);
  StatfsHelpers helpers;
  std::vector<size_t> order;
  size_t answered = 0;
  helpers.ReadAll(paths, [&](size_t i, Result<FilesystemUsage> usage) {
    order.push_back(i);
    if (i == 7 || i == 20) {
      EXPECT_FALSE(usage) << i;
      if (!usage) {
        EXPECT_EQ(usage.error().path, paths[i]);
      }
    } else {
      EXPECT_TRUE(usage) << i << ": " << (usage ? "" : usage.error().ToString());
      answered += usage.has_value();
    }
    return true;
  });
  std::vector<size_t> expected(paths.size());
  std::iota(expected.begin(), expected.end(), size_t{0});
  EXPECT_EQ(order, expected);
  EXPECT_EQ(answered, paths.size() - 2);
  EXPECT_EQ(helpers.Spawned(), 1u);
}

TEST(StatfsHelpers, ACallerThatWantsNoMoreEndsTheBatchAndTheHelperStaysInStep) {
  // Three messages' worth of paths; the caller stops at the fifth answer.
  std::vector<std::string> paths;
  size_t total = 0;
  while (total <= 2 * StatfsHelpers::kBatchBytes) {
    paths.push_back(std::string(2000, '/'));  // "/"
    total += paths.back().size() + 1;
  }
  StatfsHelpers helpers;
  std::vector<size_t> order;
  helpers.ReadAll(paths, [&](size_t i, Result<FilesystemUsage>) {
    order.push_back(i);
    return order.size() < 5;
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  // The rest of the first message was read and dropped: the same helper's
  // next answers are the next batch's, in their order.
  const std::vector<std::string> next = {"/nonexistent/iowatch-statfs-test", "/"};
  std::vector<bool> ok;
  helpers.ReadAll(next, [&](size_t, Result<FilesystemUsage> usage) {
    ok.push_back(usage.has_value());
    return true;
  });
  EXPECT_EQ(ok, (std::vector<bool>{false, true}));
  EXPECT_EQ(helpers.Spawned(), 1u);
}

TEST(StatfsHelpers, ConcurrentCallersEachGetAHelperAndNoneIsLeftBehind) {
  const size_t before = Children().size();
  {
    StatfsHelpers helpers;
    std::vector<std::thread> callers;
    std::atomic<int> answered = 0;
    for (int t = 0; t < 4; ++t) {
      callers.emplace_back([&] {
        for (int i = 0; i < 50; ++i) answered += helpers.Read("/").has_value();
      });
    }
    for (auto& c : callers) c.join();
    EXPECT_EQ(answered, 200);
    EXPECT_GE(helpers.Spawned(), 1u);
    EXPECT_LE(helpers.Spawned(), 4u);
  }
  EXPECT_EQ(Children().size(), before);  // exited and reaped
}

TEST(StatfsHelpers, AHelperThatDiedIsReplaced) {
  StatfsHelpers helpers;
  ASSERT_TRUE(helpers.Read("/"));
  const std::vector<pid_t> children = Children();
  ASSERT_FALSE(children.empty());
  for (const pid_t pid : children) ::kill(pid, SIGKILL);
  for (const pid_t pid : children) ::waitpid(pid, nullptr, 0);
  const auto lost = helpers.Read("/");  // the idle one is gone: said once
  EXPECT_FALSE(lost);
  if (!lost) {
    EXPECT_NE(lost.error().message.find("did not answer"), std::string::npos);
  }
  EXPECT_TRUE(helpers.Read("/"));  // a new one
  EXPECT_EQ(helpers.Spawned(), 2u);
}

}  // namespace
}  // namespace iowatch::collectors
