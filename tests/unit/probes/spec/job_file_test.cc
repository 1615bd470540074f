// fio job files and command lines with several jobs, into JobSets: sections,
// [global] (a later one adds to the jobs after it), comments, bare flags,
// blanks around '=', the trivial $variables, groups and phases by fio's
// rules, and errors naming the file and line.
#include "probes/spec/job_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

namespace iowatch::probes {
namespace {

JobFileEnvironment TestEnvironment() {
  JobFileEnvironment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    static const std::map<std::string, std::string> kVars = {{"SIZE", "64m"}, {"DIR", "/srv"}};
    const auto it = kVars.find(name);
    if (it == kVars.end()) return std::nullopt;
    return it->second;
  };
  env.page_size = 16384;
  env.cpus = 3;
  env.memory_mib = 2048;
  return env;
}

Result<JobSet> Parse(std::string_view text) {
  return ParseJobFile(text, "jobs.fio", TestEnvironment());
}

TEST(JobFileTest, SectionsGlobalCommentsAndFlags) {
  const auto set = Parse(
      "; a comment\n"
      "# another\n"
      "[global]\n"
      "ioengine = libaio\n"
      "direct=1\n"
      "filename=/tmp/x\n"
      "\n"
      "[seq-read]\n"
      "rw=read\n"
      "bs=1m\n"
      "time_based\n"
      "runtime=2s\n"
      "[rand-read]\n"
      "rw=randread\n"
      "  iodepth=32  \n");
  ASSERT_TRUE(set) << set.error().ToString();
  ASSERT_EQ(set->jobs.size(), 2u);
  EXPECT_EQ(set->jobs[0].spec.name, "seq-read");
  EXPECT_EQ(set->jobs[0].spec.engine, EngineKind::kLibaio);
  EXPECT_TRUE(set->jobs[0].spec.direct);
  EXPECT_EQ(set->jobs[0].spec.block_size, 1u << 20);
  EXPECT_TRUE(set->jobs[0].spec.time_based);
  EXPECT_EQ(set->jobs[1].spec.name, "rand-read");
  EXPECT_EQ(set->jobs[1].spec.iodepth, 32u);
  EXPECT_EQ(set->jobs[1].spec.block_size, 4096u);  // not the other job's
  EXPECT_EQ(set->global_options.size(), 3u);
  ASSERT_EQ(set->jobs[1].options.size(), 2u);  // its own, as written
  EXPECT_EQ(set->jobs[1].options[1].name, "iodepth");
  EXPECT_EQ(set->jobs[1].options[1].value, "32");
  EXPECT_EQ(set->jobs[0].groupid, 0u);
  EXPECT_EQ(set->jobs[1].groupid, 0u);
  EXPECT_EQ(set->jobs[1].phase, 0u);  // side by side
}

TEST(JobFileTest, ALaterGlobalAppliesToTheJobsAfterIt) {
  const auto set = Parse("[global]\nfilename=/tmp/x\n[a]\n[global]\nbs=8k\n[b]\n");
  ASSERT_TRUE(set) << set.error().ToString();
  EXPECT_EQ(set->jobs[0].spec.block_size, 4096u);
  EXPECT_EQ(set->jobs[1].spec.block_size, 8192u);
}

TEST(JobFileTest, StonewallAndNewGroupMakeGroupsAndPhasesAsFio) {
  const auto set = Parse(
      "[global]\nfilename=/tmp/x\n"
      "[a]\nstonewall\n"  // the first job: no group before it to end
      "[b]\n"
      "[c]\nnew_group\n"
      "[d]\nstonewall\n"
      "[e]\nwait_for_previous\nnumjobs=4\n");
  ASSERT_TRUE(set) << set.error().ToString();
  const uint32_t groups[] = {0, 0, 1, 2, 3};
  const uint32_t phases[] = {0, 0, 0, 1, 2};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(set->jobs[i].groupid, groups[i]) << i;
    EXPECT_EQ(set->jobs[i].phase, phases[i]) << i;
  }
  EXPECT_EQ(set->Clones(), 8u);
}

TEST(JobFileTest, ExpandsTheTrivialVariables) {
  const auto set =
      Parse("[global]\ndirectory=${DIR}\nsize=${SIZE}\n[a]\nbs=$pagesize\niodepth=$ncpus\n");
  ASSERT_TRUE(set) << set.error().ToString();
  EXPECT_EQ(set->jobs[0].spec.directory, "/srv");
  EXPECT_EQ(set->jobs[0].spec.size, 64u << 20);
  EXPECT_EQ(set->jobs[0].spec.block_size, 16384u);
  EXPECT_EQ(set->jobs[0].spec.iodepth, 3u);
  EXPECT_EQ(set->jobs[0].spec.TargetPath(), "/srv/a.0.0");
}

TEST(JobFileTest, ErrorsNameTheFileAndLine) {
  struct Case {
    const char* text;
    int line;
    const char* says;
  };
  const Case cases[] = {
      {"[a]\nfilename=/x\nbs=4q\n", 3, "bs: expected a size"},
      {"[a]\nfilename=/x\nnorandommap\n", 3, "norandommap"},
      {"bs=4k\n[a]\n", 1, "before the first section"},
      {"[a]\nfilename=/x\nsize=$(1024*1024)\n", 3, "arithmetic"},
      {"[a]\nfilename=${NOPE}/x\n", 2, "${NOPE}: not set"},
      {"[a]\nfilename=/x\nbs=$blocksize\n", 3, "expected $pagesize"},
      {"[a]\ninclude other.fio\n", 2, "include: not supported"},
      {"[a\nfilename=/x\n", 1, "expected [section]"},
      {"[a]\nrw=read\n", 1, "filename or directory is required"},  // the job as a whole
      {"[a]\nfilename=/x\nnumjobs=0\n", 3, "numjobs: expected an integer from 1 to 256"},
  };
  for (const Case& c : cases) {
    const auto set = Parse(c.text);
    ASSERT_FALSE(set) << c.text;
    EXPECT_EQ(set.error().path, "jobs.fio") << c.text;
    EXPECT_EQ(set.error().line, c.line) << c.text << ": " << set.error().ToString();
    EXPECT_NE(set.error().message.find(c.says), std::string::npos)
        << c.text << ": " << set.error().ToString();
  }
}

TEST(JobFileTest, AFileWithoutAJobIsAnError) {
  const auto set = Parse("[global]\nbs=4k\n");
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().message.find("no job"), std::string::npos);
}

TEST(JobFileTest, ReadJobFileSaysWhichFileIsMissing) {
  const auto set = ReadJobFile("/nonexistent/jobs.fio");
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().path, "/nonexistent/jobs.fio");
}

// A job file of /dev/zero grew the reader (the daemon at
// SIGHUP, check-config, iowatch probe) to gigabytes, and a FIFO blocked it
// forever (the daemon's event loop with it).
TEST(JobFileTest, ReadJobFileReadsOnlyARegularFileOfBoundedSize) {
  const auto zero = ReadJobFile("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().ToString(),
            "/dev/zero: cannot read the job file: expected a regular file, found a character "
            "device");

  char pattern[] = "/var/tmp/iowatch-job-file-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::filesystem::path dir = pattern;
  struct Remove {
    std::filesystem::path path;
    ~Remove() { std::filesystem::remove_all(path); }
  } remove{dir};
  const std::string big = dir / "big.fio";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, kMaxJobFileBytes + 1);  // sparse
  const auto too_big = ReadJobFile(big);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().ToString(),
            big + ": cannot read the job file: longer than 1048576 bytes");

  const std::string fifo = dir / "jobs.fio";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] { return ReadJobFile(fifo); });
  if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    close(open(fifo.c_str(), O_WRONLY | O_NONBLOCK));  // let the blocked reader go
    FAIL() << "ReadJobFile blocked on a FIFO";
  }
  const auto from_fifo = read.get();
  ASSERT_FALSE(from_fifo);
  EXPECT_EQ(from_fifo.error().ToString(),
            fifo + ": cannot read the job file: expected a regular file, found a FIFO");
}

// The kernel sees a path cut at its first NUL byte, so
// "/x\0y" would probe /x.
TEST(JobFileTest, ANulByteInAValueIsRefusedNotCut) {
  using namespace std::string_view_literals;
  for (const std::string_view text :
       {"[a]\nfilename=/x\0y\n"sv, "[a]\ndirectory=/x\0y\nsize=1m\n"sv,
        "[a\0b]\nfilename=/x\n"sv}) {
    const auto set = Parse(text);
    ASSERT_FALSE(set) << text;
    EXPECT_NE(set.error().message.find("NUL byte"), std::string::npos) << set.error().ToString();
  }
}

// $pagesize, $ncpus and $mb_memory on the real host: sysconf's answers, as fio's.
TEST(JobFileTest, TheHostEnvironmentIsSysconfs) {
  const JobFileEnvironment host = JobFileEnvironment::Host();
  const long page = sysconf(_SC_PAGESIZE);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const long pages = sysconf(_SC_PHYS_PAGES);
  ASSERT_GT(page, 0);
  ASSERT_GT(cpus, 0);
  ASSERT_GT(pages, 0);
  EXPECT_EQ(host.page_size, static_cast<uint64_t>(page));
  EXPECT_EQ(host.cpus, static_cast<uint32_t>(cpus));
  EXPECT_EQ(host.memory_mib, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) >> 20);
}

// fio stops at 4,096 jobs in a run (its MAX_JOBS); sections
// times numjobs had no bound here.
TEST(JobFileTest, ARunHasAtMostFioMaxJobs) {
  std::string text = "[global]\nfilename=/x\nnumjobs=256\n";
  for (int i = 0; i < 16; ++i) text += fmt::format("[j{}]\n", i);
  const auto full = Parse(text);
  ASSERT_TRUE(full) << full.error().ToString();
  EXPECT_EQ(full->Clones(), kMaxJobsPerRun);
  text += "[j16]\n";
  const auto over = Parse(text);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().ToString(),
            "jobs.fio:20: job \"j16\": 4352 jobs in the run (numjobs of each section added up): "
            "expected at most 4096, as fio");
}

TEST(JobSetFromArgumentsTest, OptionsBeforeTheFirstNameAreGlobal) {
  const std::vector<JobOption> args = {
      {"filename", "/tmp/x"}, {"bs", "8k"},      {"name", "a"},    {"rw", "randread"},
      {"name", "b"},          {"stonewall", ""}, {"numjobs", "2"}, {"group_reporting", ""}};
  const auto set = JobSetFromArguments(args);
  ASSERT_TRUE(set) << set.error().ToString();
  ASSERT_EQ(set->jobs.size(), 2u);
  EXPECT_EQ(set->jobs[0].spec.name, "a");
  EXPECT_EQ(set->jobs[0].spec.rw, RwMode::kRandRead);
  EXPECT_EQ(set->jobs[1].spec.block_size, 8192u);
  EXPECT_EQ(set->jobs[1].spec.rw, RwMode::kRead);
  EXPECT_EQ(set->jobs[1].groupid, 1u);
  EXPECT_EQ(set->jobs[1].phase, 1u);
  EXPECT_TRUE(set->jobs[1].spec.group_reporting);
  EXPECT_EQ(set->global_options.size(), 2u);
  EXPECT_EQ(set->jobs[0].options.front().name, "name");  // fio lists it among the job's options
}

TEST(JobSetFromArgumentsTest, WithoutANameEveryOptionIsTheOneJobs) {
  const std::vector<JobOption> args = {{"filename", "/tmp/x"}, {"numjobs", "4"}};
  const auto set = JobSetFromArguments(args);
  ASSERT_TRUE(set) << set.error().ToString();
  ASSERT_EQ(set->jobs.size(), 1u);
  EXPECT_EQ(set->jobs[0].options.size(), 2u);
  EXPECT_TRUE(set->global_options.empty());
  EXPECT_EQ(set->Clones(), 4u);
}

}  // namespace
}  // namespace iowatch::probes
