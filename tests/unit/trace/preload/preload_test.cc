// The trace library's own parts, outside a traced process: the mapped file
// table (nothing allocated where a signal handler may be), the guard on the
// real calls' resolution, the report's writing (a FIFO without reader, a
// reader gone; a program that ends holding every descriptor), and the
// tracer's checks that a number is still the file it was opened or copied as
// (the program's threads racing close, dup2 and pipe on it).
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "tests/unit/test_files.h"
#include "trace/preload/file_table.h"
#include "trace/preload/real_calls.h"
#include "trace/preload/report_file.h"
#include "trace/preload/tracer.h"
#include "trace/process_trace.h"

namespace iowatch::trace {
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

// A pipe's name is no path: a number closed and given to a pipe between an
// open and the reading of its name made a "pipe:[N]" file in the report.
TEST(FileTable, APipeHasNoName) {
  FileTable table;
  ASSERT_TRUE(table.Map());
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  EXPECT_EQ(table.NameOf(ends[0]), "");
  close(ends[0]);
  close(ends[1]);
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

// Runs `body` in a forked child (its descriptor limit and table its own);
// the child's exit status, 100 when it was killed.
template <class Body>
int InChild(Body&& body) {
  const pid_t child = fork();
  if (child == 0) _exit(body());
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

// Opens /dev/null until EMFILE; false when it stopped for another reason.
bool UseEveryDescriptor() {
  while (open("/dev/null", O_RDONLY) >= 0) {
  }
  return errno == EMFILE;
}

// A program that ends holding every descriptor its limit allows left none
// to open the report with: the report was lost.
TEST(ReportFile, AProgramAtEmfileGetsItsReport) {
  testing::TempDir dir;
  const std::string path = dir.File("report");
  const int status = InChild([&] {
    const rlimit limit{64, 64};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
    ReportFile report;
    report.Reserve(path.c_str(), ReserveCeiling());
    if (report.descriptor() != 63) return 3;  // the highest the limit allows
    if (!UseEveryDescriptor()) return 4;
    return report.Append("report\n") ? 0 : 5;
  });
  EXPECT_EQ(status, 0) << "2: setrlimit, 3: not kept at 63, 4: no EMFILE, 5: not written";
  EXPECT_EQ(testing::ReadFile(path), "report\n");
}

// A program that put a file of its own on the kept number (dup2) never gets
// the report in it: the kept descriptor is used only while it is ours.
TEST(ReportFile, ADescriptorReplacedByTheProgramIsNotWritten) {
  testing::TempDir dir;
  const std::string path = dir.File("report");
  const std::string data = dir.File("data");
  const int status = InChild([&] {
    const rlimit limit{64, 64};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 2;
    ReportFile report;
    report.Reserve(path.c_str(), ReserveCeiling());
    const int own = open(data.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (report.descriptor() < 0 || own < 0 || dup2(own, report.descriptor()) < 0) return 3;
    if (!UseEveryDescriptor()) return 4;
    return report.Append("report\n") ? 5 : 0;
  });
  EXPECT_EQ(status, 0) << "2: setrlimit, 3: dup2, 4: no EMFILE, 5: written to the program's file";
  EXPECT_EQ(testing::ReadFile(data), "");
}

// A FIFO is not opened before the end: its reader would see a writer come
// and go.
TEST(ReportFile, AFifoIsNotKeptOpen) {
  testing::TempDir dir;
  const std::string path = dir.File("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  ReportFile report;
  report.Reserve(path.c_str(), ReserveCeiling());
  EXPECT_EQ(report.descriptor(), -1);
}

// A tracer outside a traced process: the calls the interposed functions
// make, made by hand, with the program's races laid out one step at a time.
class TracerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("IOWATCH_TRACE_OUTPUT");
    unsetenv("IOWATCH_TRACE_REPORT");
    ASSERT_TRUE(tracer_.Start());
    a_ = dir_.File("a");
    b_ = dir_.File("b");
    for (const std::string& path : {a_, b_}) {
      const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
      ASSERT_GE(fd, 0);
      close(fd);
    }
  }
  int Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << path;
    return fd;
  }

  testing::TempDir dir_;
  std::string a_, b_;
  Tracer tracer_;  // never destroyed in a traced process; here it may be
};

// Another thread closed the number an open of A returned and dup2()ed B
// over it before Opened ran: B was traced as a second open, A's open lost.
TEST_F(TracerTest, ANumberThatIsAnotherFileSinceTheOpenIsNotTraced) {
  const int fd = Open(a_);
  const int other = Open(b_);
  ASSERT_GE(dup2(other, fd), 0);
  tracer_.Opened(fd, AT_FDCWD, a_.c_str(), O_RDONLY, 0);
  EXPECT_FALSE(tracer_.Traced(fd));
  tracer_.Opened(other, AT_FDCWD, b_.c_str(), O_RDONLY, 0);
  EXPECT_TRUE(tracer_.Traced(other));
  close(fd);
  close(other);
}

// ... or gave it to a pipe: the pipe was traced as "pipe:[N]".
TEST_F(TracerTest, ANumberThatIsAPipeSinceTheOpenIsNotTraced) {
  const int fd = Open(a_);
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  ASSERT_GE(dup2(ends[0], fd), 0);
  tracer_.Opened(fd, AT_FDCWD, a_.c_str(), O_RDONLY, 0);
  EXPECT_FALSE(tracer_.Traced(fd));
  for (const int end : {fd, ends[0], ends[1]}) close(end);
}

// dup2(A, n) returned, then another thread closed A's number and opened B
// on it: n, a copy of A, was traced as B.
TEST_F(TracerTest, ACopyIsTracedOnlyAsTheFileItIs) {
  const int fd = Open(a_);
  tracer_.Opened(fd, AT_FDCWD, a_.c_str(), O_RDONLY, 0);
  ASSERT_TRUE(tracer_.Traced(fd));
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  tracer_.Duplicated(fd, ends[1]);  // as if fd's number were dup2()ed onto a pipe's end
  EXPECT_FALSE(tracer_.Traced(ends[1]));
  const int copy = dup(fd);
  ASSERT_GE(copy, 0);
  tracer_.Duplicated(fd, copy);
  EXPECT_TRUE(tracer_.Traced(copy));
  for (const int end : {fd, copy, ends[0], ends[1]}) close(end);
}

// pipe() returned n, another thread closed n and opened A on it (traced):
// the pipe's Created, arriving late, retired A's slot.
TEST_F(TracerTest, ALateCreatedLeavesTheFileNowOnTheNumber) {
  const int fd = Open(a_);
  tracer_.Opened(fd, AT_FDCWD, a_.c_str(), O_RDONLY, 0);
  tracer_.Created(fd);
  EXPECT_TRUE(tracer_.Traced(fd));
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  ASSERT_GE(dup2(ends[0], fd), 0);  // closed behind the tracer, a pipe on it
  tracer_.Created(fd);
  EXPECT_FALSE(tracer_.Traced(fd));
  for (const int end : {fd, ends[0], ends[1]}) close(end);
}

// A pipe's end, untraced, is still handed to the tracer while any open is
// under way: that open may register the number's slot after the pipe's
// call looked it up.
TEST_F(TracerTest, ANewDescriptorMayMeetASlotWhileAnOpenIsUnderWay) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  EXPECT_FALSE(tracer_.MayMeetSlot(ends[0]));
  tracer_.BeginOpen();
  EXPECT_TRUE(tracer_.MayMeetSlot(ends[0]));
  tracer_.EndOpen();
  EXPECT_FALSE(tracer_.MayMeetSlot(ends[0]));
  const int fd = Open(a_);
  tracer_.Opened(fd, AT_FDCWD, a_.c_str(), O_RDONLY, 0);
  EXPECT_TRUE(tracer_.MayMeetSlot(fd));
  for (const int end : {fd, ends[0], ends[1]}) close(end);
}

TEST(ReportFile, StartLine) {
  char line[128];
  const size_t n = FormatStartLine(1234, 1, "\"/bin/prog\"", line);
  EXPECT_EQ(
      std::string(line, n),
      "{\"iowatch_trace_start\":1,\"pid\":1234,\"parent_pid\":1,\"program\":\"/bin/prog\"}\n");
}

}  // namespace
}  // namespace iowatch::trace
