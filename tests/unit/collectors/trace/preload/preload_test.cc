// The trace library's own parts, outside a traced process: the mapped file
// table (issue 26 item 10: nothing allocated where a signal handler may
// be), the guard on the real calls' resolution (item 12), and the report's
// writing (item 11: a FIFO without reader, a reader gone).
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "collectors/trace/preload/file_table.h"
#include "collectors/trace/preload/real_calls.h"
#include "collectors/trace/preload/report_file.h"
#include "collectors/trace/process_trace.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors::trace {
namespace {

TEST(FileTable, NamesAreFoundAgainAndTheOnesBeyondTheLimitShareOneEntry) {
  FileTable table;
  ASSERT_TRUE(table.Map());
  const uint32_t a = table.Find("/data/a");
  EXPECT_EQ(table.Find("/data/b"), a + 1);
  EXPECT_EQ(table.Find("/data/a"), a);
  EXPECT_EQ(table.Name(a), "/data/a");
  table.Trace(a).opens = 3;
  for (size_t i = table.size(); i < kMaxTracedFiles; ++i) table.Find("/f" + std::to_string(i));
  const uint32_t other = table.Find("/one/too/many");
  EXPECT_EQ(table.Name(other), kOtherFiles);
  EXPECT_EQ(table.Find("/and/another"), other);
  EXPECT_EQ(table.Find("/data/b"), a + 1);
  table.ResetTraces();
  EXPECT_EQ(table.Trace(a).opens, 0u);
}

// A descriptor another thread closed before its name was read is no file:
// the old tracer traced it as "(descriptor N)".
TEST(FileTable, AClosedDescriptorHasNoName) {
  FileTable table;
  ASSERT_TRUE(table.Map());
  testing::TempDir dir;
  const std::string path = dir.File("f");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(table.NameOf(fd), path);
  close(fd);
  EXPECT_EQ(table.NameOf(fd), "");
}

// A resolution that comes back into itself: what a failing dlsym does when
// the program's allocator does I/O in the malloc dlsym calls for its error.
RealCallsResolver* g_resolver = nullptr;
int g_reentered = 0;
bool g_write_was_found = false;

void* FailingCloseRange(const char* name) {
  if (std::strcmp(name, "close_range") == 0) {
    ++g_reentered;
    const RealCalls& inner = g_resolver->Get(FailingCloseRange);  // must not resolve again
    g_write_was_found = inner.write != nullptr;
    return nullptr;
  }
  return dlsym(RTLD_DEFAULT, name);
}

TEST(RealCalls, AResolutionThatComesBackIntoItselfGetsTheTableAsItIs) {
  RealCallsResolver resolver;
  g_resolver = &resolver;
  const RealCalls& table = resolver.Get(FailingCloseRange);
  EXPECT_EQ(g_reentered, 1);       // the old Real() recursed until the stack ran out
  EXPECT_TRUE(g_write_was_found);  // what an allocator writes with was found first
  EXPECT_NE(table.closefrom, nullptr);
  EXPECT_EQ(table.close_range, nullptr);
  errno = 0;
  EXPECT_EQ(CallReal(table.close_range, 100u, 101u, 0), -1);
  EXPECT_EQ(errno, ENOSYS);
  EXPECT_EQ(&resolver.Get(FailingCloseRange), &table);
  EXPECT_EQ(g_reentered, 1);
}

TEST(ReportFile, AppendsToAFile) {
  testing::TempDir dir;
  const std::string path = dir.File("report");
  ASSERT_TRUE(AppendToFile(path.c_str(), "one\n"));
  ASSERT_TRUE(AppendToFile(path.c_str(), "two\n"));
  EXPECT_EQ(testing::ReadFile(path), "one\ntwo\n");
}

// A FIFO nobody reads held the traced program's exit forever.
TEST(ReportFile, AFifoWithoutReaderFailsAtOnce) {
  testing::TempDir dir;
  const std::string path = dir.File("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(AppendToFile(path.c_str(), "report\n"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// A pipe whose reader is gone: the write fails, the SIGPIPE it raised is
// taken back, and the program lives on (its exit status its own).
TEST(ReportFile, AReaderGoneRaisesNoSignal) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  close(ends[0]);
  const std::string path = "/proc/self/fd/" + std::to_string(ends[1]);
  EXPECT_FALSE(AppendToFile(path.c_str(), "report\n"));
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  EXPECT_EQ(sigismember(&mask, SIGPIPE), 0);  // the mask as it was
  close(ends[1]);
}

TEST(ReportFile, StartLine) {
  char line[128];
  const size_t n = FormatStartLine(1234, 1, "\"/bin/prog\"", line);
  EXPECT_EQ(
      std::string(line, n),
      "{\"iowatch_trace_start\":1,\"pid\":1234,\"parent_pid\":1,\"program\":\"/bin/prog\"}\n");
}

}  // namespace
}  // namespace iowatch::collectors::trace
