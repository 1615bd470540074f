#include "trace/process_trace.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include "trace/trace_json_read.h"

namespace iowatch::trace {
namespace {

ProcessTrace Sample() {
  ProcessTrace p;
  p.pid = 42;
  p.parent_pid = 1;
  p.program = "/usr/bin/odd \"name\"\n";
  p.seconds = 1.25;
  p.clock = "tsc";
  TracedFile f;
  f.path = "/data/f";
  f.trace.opens = 2;
  f.trace.open_flags = O_RDWR | O_CREAT | O_DIRECT;
  f.trace.size = 30720000;
  Cursor c;
  for (int i = 0; i < 3; ++i) {
    RecordTransfer(f.trace, c, Direction::kWrite, kAtCursor, 102400, 102400, 1'000'000);
  }
  RecordTransfer(f.trace, c, Direction::kRead, 0, 4096, 4096, 2'000'000);
  RecordSeek(f.trace, c, 0, 10);
  RecordCall(f.trace, TraceCall::kFsync, true, 5);
  f.trace.Call(TraceCall::kWrite).raced = 1;  // round-trips, and is said in the text
  p.files.push_back(f);
  return p;
}

TEST(ProcessTrace, JsonLinesRoundTrip) {
  const ProcessTrace p = Sample();
  const std::string line = TraceJsonLine(p);
  ASSERT_EQ(line.back(), '\n');
  ASSERT_EQ(line.find('\n'), line.size() - 1);  // one line, whatever the names hold
  const TraceLines read = ParseTraceJsonLines(line + "\n" + line, "t.json");
  EXPECT_TRUE(read.bad_lines.empty());
  ASSERT_EQ(read.processes.size(), 2u);
  EXPECT_EQ(read.processes[0], p);
}

// A name that is not UTF-8 made the library write a line no JSON reader
// takes: the process's whole report was dropped.
TEST(ProcessTrace, ANameThatIsNotUtf8StillMakesALine) {
  ProcessTrace p = Sample();
  p.files[0].path = "/data/\xff\xfe-\xc3.dat";
  const TraceLines read = ParseTraceJsonLines(TraceJsonLine(p), "t.json");
  ASSERT_TRUE(read.bad_lines.empty()) << read.bad_lines[0].ToString();
  ASSERT_EQ(read.processes.size(), 1u);
  EXPECT_EQ(read.processes[0].files[0].path,
            "/data/\xEF\xBF\xBD\xEF\xBF\xBD-\xEF\xBF\xBD.dat");  // U+FFFD each
}

TEST(ProcessTrace, BadLinesAreNamedAndTheOthersKept) {
  const std::string good = TraceJsonLine(Sample());
  const TraceLines read =
      ParseTraceJsonLines(good + "{\"iowatch_trace\": 9}\n" + good.substr(0, 40), "t.json");
  EXPECT_EQ(read.processes.size(), 1u);
  ASSERT_EQ(read.bad_lines.size(), 2u);
  EXPECT_EQ(read.bad_lines[0].ToString(),
            "t.json:2: not a trace line: expected an object with \"iowatch_trace\": 1");
  EXPECT_EQ(read.bad_lines[1].line, 3);
}

TEST(ProcessTrace, AFloatWhereACountBelongsIsABadLine) {
  std::string line = TraceJsonLine(Sample());
  line.replace(line.find("\"calls\":3"), 9, "\"calls\":1e300");
  const TraceLines read = ParseTraceJsonLines(line, "t.json");
  EXPECT_TRUE(read.processes.empty());
  ASSERT_EQ(read.bad_lines.size(), 1u);
  EXPECT_NE(read.bad_lines[0].message.find("expected an integer"), std::string::npos)
      << read.bad_lines[0].message;
}

TEST(ProcessTrace, TextIsMioStyle) {
  const std::string text = FormatTraceText(Sample());
  // 307200 + 4096 bytes moved in 5 ms of transfers.
  EXPECT_NE(text.find("Trace close : program <-> os : /data/f : (311296/0.005000)=62259.20 kB/s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("oflags=0x4042=RDWR|CREAT|DIRECT  opens=2"), std::string::npos) << text;
  EXPECT_NE(text.find("write pattern: sequential (3 sequential)"), std::string::npos) << text;
  EXPECT_NE(text.find("read  pattern: random (1 random)"), std::string::npos) << text;
  EXPECT_NE(text.find("   [   64K,   128K)            3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("average seek delta=-307200"), std::string::npos) << text;
  EXPECT_NE(text.find("fsync             1     0.000000        1"), std::string::npos) << text;
  EXPECT_NE(text.find("   raced=1\n"), std::string::npos) << text;
  ProcessTrace calm = Sample();
  calm.files[0].trace.Call(TraceCall::kWrite).raced = 0;
  EXPECT_EQ(FormatTraceText(calm).find("raced="), std::string::npos);
}

TEST(ProcessTrace, OpenFlagsText) {
  EXPECT_EQ(OpenFlagsText(O_RDONLY), "RDONLY");
  EXPECT_EQ(OpenFlagsText(O_WRONLY | O_APPEND | O_CLOEXEC), "WRONLY|APPEND|CLOEXEC");
  EXPECT_EQ(OpenFlagsText(O_RDWR | O_SYNC), "RDWR|DSYNC|SYNC");
}

}  // namespace
}  // namespace iowatch::trace
