// What `iowatch trace` reads back (trace_json_read.h): the start lines that
// name the processes that wrote no report, and the file read a bounded line
// at a time (the traced program may have filled it with junk).
#include "trace/trace_json_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/unit/test_files.h"

namespace iowatch::trace {
namespace {

ProcessTrace WithFile(int64_t pid, std::string path) {
  ProcessTrace p;
  p.pid = pid;
  p.parent_pid = 1;
  p.program = "/bin/prog";
  p.clock = "tsc";
  TracedFile f;
  f.path = std::move(path);
  f.trace.opens = 1;
  p.files.push_back(f);
  return p;
}

std::string Start(int64_t pid, std::string_view program) {
  return "{\"iowatch_trace_start\":1,\"pid\":" + std::to_string(pid) +
         ",\"parent_pid\":1,\"program\":\"" + std::string(program) + "\"}\n";
}

TEST(TraceJsonRead, StartLinesNameTheProcessesThatWroteNoReport) {
  const std::string text = Start(10, "/bin/sh") + Start(10, "/bin/prog") +  // sh exec'd prog
                           Start(11, "/bin/killed") + TraceJsonLine(WithFile(10, "/f")) +
                           Start(12, "/bin/sh") + Start(12, "/bin/chrooted");
  const TraceLines read = ParseTraceJsonLines(text, "t.json");
  ASSERT_TRUE(read.bad_lines.empty()) << read.bad_lines[0].ToString();
  EXPECT_EQ(read.started.size(), 5u);
  const std::vector<StartedProcess> expected{{11, 1, "/bin/killed"}, {12, 1, "/bin/chrooted"}};
  EXPECT_EQ(Unreported(read), expected);
}

TEST(TraceJsonRead, TheFileIsReadALineAtATimeAndJunkSkipped) {
  testing::TempDir dir;
  const std::string path = dir.File("lines.json");
  {
    std::ofstream out(path);
    out << Start(3, "/bin/prog") << std::string(kMaxTraceLineBytes + 1, 'x') << "\n"
        << TraceJsonLine(WithFile(3, "/f"));
  }
  const auto read = ReadTraceJsonFile(path);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(read->processes.size(), 1u);
  EXPECT_EQ(read->started.size(), 1u);
  ASSERT_EQ(read->bad_lines.size(), 1u);
  EXPECT_EQ(read->bad_lines[0].ToString(),
            path + ":2: not a trace line: longer than 16777216 bytes, not read");
}

TEST(TraceJsonRead, AFifoInTheFilesPlaceIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.File("lines.json");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const auto read = ReadTraceJsonFile(path);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().ToString(),
            path + ": cannot read the trace: expected a regular file, found a FIFO");
}

}  // namespace
}  // namespace iowatch::trace
