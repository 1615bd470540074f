// The io_uring engine's options and fallbacks, on a real file under
// /var/tmp: fio's defaults (nothing registered), each option doing what fio
// does with it (fixedbufs, registerfiles, sqthread_poll implying
// registerfiles, hipri making a polled ring), and each fallback reported
// through Fallbacks() while the I/O still works: SUBMIT_ALL refused (the
// engine's seam for older kernels) and file registration refused (a
// seccomp filter in a forked child). The RLIMIT_MEMLOCK fallback of
// fixedbufs is tested with the other engine tests in
// tests/unit/probes/target/probe_io_test.cc. Tests skip when the kernel
// refuses io_uring.
#include "probes/engines/uring_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/probes/child_process.h"

namespace iowatch::probes {
namespace {

constexpr size_t kBlock = 4096;

// A 64 KiB file of 'x' under /var/tmp, open O_RDWR | O_DIRECT, and two
// aligned buffers; removed at the end.
class DataFile {
 public:
  DataFile() {
    char pattern[] = "/var/tmp/iowatch-uring-test-XXXXXX";
    const int fd = mkstemp(pattern);
    if (fd < 0) return;
    path_ = pattern;
    const std::string data(16 * kBlock, 'x');
    const bool written = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    close(fd);
    if (written) fd_ = open(path_.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    for (int i = 0; i < 2; ++i) {
      owned_.emplace_back(static_cast<std::byte*>(std::aligned_alloc(kBlock, kBlock)), &std::free);
      spans_.emplace_back(owned_.back().get(), kBlock);
    }
  }
  ~DataFile() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
  }
  bool ok() const { return fd_ >= 0; }
  EngineTarget target() const { return {fd_, spans_}; }

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<std::unique_ptr<std::byte, decltype(&std::free)>> owned_;
  std::vector<std::span<std::byte>> spans_;
};

// One request through the engine; its completion's result (or a failure
// code below -1000 when the engine itself failed).
int64_t DoOne(UringEngine& engine, IoOp op) {
  if (!engine.Queue({op, 0, op == IoOp::kFsync ? 0u : static_cast<uint32_t>(kBlock), 0, 5})) {
    return -1001;
  }
  if (engine.Submit().value_or(0) != 1) return -1002;
  std::vector<IoCompletion> out(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto n = engine.Reap(1, out, std::chrono::seconds(1));
    if (!n) return -1003;
    if (*n == 1) return out[0].tag == 5 ? out[0].result : -1004;
  }
  return -1005;
}

class UringOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(file_.ok()) << "cannot make an O_DIRECT file in /var/tmp"; }

  // Opens `engine` on the file, or says why the test must skip.
  std::string Open(UringEngine& engine) {
    const auto opened = engine.Open(file_.target(), 2);
    if (!opened && opened.error().code == ErrorCode::kUnsupported) return opened.error().ToString();
    EXPECT_TRUE(opened) << opened.error().ToString();
    return "";
  }

  DataFile file_;
};

#define OPEN_OR_SKIP(engine)                                \
  if (const std::string why = Open(engine); !why.empty()) { \
    GTEST_SKIP() << why;                                    \
  }

// The SQPOLL kernel thread is one of the process's tasks; it names itself
// "iou-sqp-PID" once it starts running, so look for a second.
bool SqpollThreadRuns() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  do {
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      if (std::getline(comm, name) && name.starts_with("iou-sqp-")) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

TEST_F(UringOptionsTest, DefaultsRegisterNeitherBuffersNorFileAsFio) {
  UringEngine engine;
  OPEN_OR_SKIP(engine);
  EXPECT_FALSE(engine.UsesFixedBuffers());
  EXPECT_FALSE(engine.UsesFixedFile());
  EXPECT_TRUE(engine.Fallbacks().empty()) << engine.Fallbacks()[0].reason;
  EXPECT_EQ(DoOne(engine, IoOp::kRead), static_cast<int64_t>(kBlock));
  EXPECT_EQ(DoOne(engine, IoOp::kWrite), static_cast<int64_t>(kBlock));
}

TEST_F(UringOptionsTest, FixedbufsAndRegisterfilesRegisterAsAsked) {
  UringEngine engine({.fixedbufs = true, .registerfiles = true});
  OPEN_OR_SKIP(engine);
  EXPECT_TRUE(engine.UsesFixedBuffers());
  EXPECT_TRUE(engine.UsesFixedFile());
  EXPECT_TRUE(engine.Fallbacks().empty());
  EXPECT_EQ(DoOne(engine, IoOp::kRead), static_cast<int64_t>(kBlock));
  EXPECT_EQ(DoOne(engine, IoOp::kWrite), static_cast<int64_t>(kBlock));
  EXPECT_EQ(DoOne(engine, IoOp::kFsync), 0);
  UringEngine buffers_only({.fixedbufs = true});
  OPEN_OR_SKIP(buffers_only);
  EXPECT_TRUE(buffers_only.UsesFixedBuffers());
  EXPECT_FALSE(buffers_only.UsesFixedFile());
}

TEST_F(UringOptionsTest, SqthreadPollStartsTheKernelThreadAndRegistersTheFile) {
  UringEngine engine({.sqthread_poll = true});
  OPEN_OR_SKIP(engine);
  EXPECT_TRUE(SqpollThreadRuns());
  EXPECT_TRUE(engine.UsesFixedFile());  // fio: "sqthread submission requires registered files"
  EXPECT_FALSE(engine.UsesFixedBuffers());
  EXPECT_EQ(DoOne(engine, IoOp::kRead), static_cast<int64_t>(kBlock));
  engine.Close();
}

// A polled ring takes only pollable requests: the kernel refuses fsync with
// EINVAL whatever the device, which shows IORING_SETUP_IOPOLL was set (and
// is why ValidateJobSpec refuses hipri with fsync).
TEST_F(UringOptionsTest, HipriMakesAPolledRing) {
  UringEngine engine({.hipri = true});
  OPEN_OR_SKIP(engine);
  EXPECT_EQ(DoOne(engine, IoOp::kFsync), -EINVAL);
  UringEngine plain;
  OPEN_OR_SKIP(plain);
  EXPECT_EQ(DoOne(plain, IoOp::kFsync), 0);
}

// Adversarial test: without EXT_ARG liburing queues its own
// timeout request tagged ~0 (then also iowatch's cancel tag) and the runner
// ended on a completion it never asked for. Such a kernel is refused.
TEST_F(UringOptionsTest, AKernelWithoutExtArgIsRefusedWithAHint) {
  UringEngine probe;
  OPEN_OR_SKIP(probe);  // io_uring itself must work for the refusal to be ours
  probe.Close();
  UringEngine old_kernel({}, 0, IORING_FEAT_EXT_ARG);
  const auto opened = old_kernel.Open(file_.target(), 2);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(opened.error().message,
            "io_uring is not available (the kernel lacks IORING_FEAT_EXT_ARG, Linux 5.11 or "
            "newer is needed); use --ioengine=psync");
}

TEST_F(UringOptionsTest, SubmitAllRefusedIsAReportedFallback) {
  UringEngine engine({}, IORING_SETUP_SUBMIT_ALL);
  OPEN_OR_SKIP(engine);
  ASSERT_EQ(engine.Fallbacks().size(), 1u);
  EXPECT_EQ(engine.Fallbacks()[0].name, "submit_all");
  EXPECT_NE(engine.Fallbacks()[0].reason.find("IORING_SETUP_SUBMIT_ALL"), std::string::npos);
  EXPECT_EQ(DoOne(engine, IoOp::kRead), static_cast<int64_t>(kBlock));
  engine.Close();
  EXPECT_EQ(engine.Fallbacks().size(), 1u);  // kept after Close, for the result
  OPEN_OR_SKIP(engine);
  EXPECT_EQ(engine.Fallbacks().size(), 1u);  // each Open starts afresh
}

// io_uring_register(IORING_REGISTER_FILES) fails with ENOMEM under a seccomp
// filter: the engine must go on with the plain descriptor and say so, for
// registerfiles and for sqthread_poll, which implies it.
TEST_F(UringOptionsTest, RegisterfilesRefusedIsAReportedFallback) {
  const int code = test::InChild(
      [] { return test::DenySyscall(__NR_io_uring_register, ENOMEM, IORING_REGISTER_FILES); },
      [&]() -> int {
        for (const IoUringOptions options :
             {IoUringOptions{.registerfiles = true}, IoUringOptions{.sqthread_poll = true}}) {
          UringEngine engine(options);
          if (!engine.Open(file_.target(), 2)) return test::kSkipExit;
          CHILD_CHECK(!engine.UsesFixedFile());
          CHILD_CHECK(engine.Fallbacks().size() == 1);
          const EngineFallback& fallback = engine.Fallbacks()[0];
          fprintf(stderr, "%s: %s\n", fallback.name.c_str(), fallback.reason.c_str());
          CHILD_CHECK(fallback.name == "registerfiles");
          CHILD_CHECK(fallback.reason.find("Cannot allocate memory") != std::string::npos);
          CHILD_CHECK((fallback.reason.find("sqthread_poll") != std::string::npos) ==
                      options.sqthread_poll);
          CHILD_CHECK(DoOne(engine, IoOp::kRead) == static_cast<int64_t>(kBlock));
        }
        return 0;
      });
  if (code == test::kSkipExit) GTEST_SKIP() << "cannot install a seccomp filter or open io_uring";
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace iowatch::probes
