// Store on a real full and a real read-only file system: a 1 MiB tmpfs
// mounted in a private mount namespace of a forked child (so nothing leaks
// into the host's mounts, even if the test dies), filled to ENOSPC by
// another file. Needs root (CAP_SYS_ADMIN); skips with the reason otherwise.
// The child reports through a pipe: "" when every check passed, "skip: …"
// when the environment refused, else what went wrong.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "probes/store/store.h"
#include "probes/store/store_sqlite.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

using test_store::SampleRun;

std::string Errno(std::string_view what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

// Writes until the file system says ENOSPC; false if it never does.
bool FillUp(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string chunk(4096, 'x');
  bool full = false;
  for (size_t size = chunk.size(); size > 0 && !full;) {
    const ssize_t n = ::write(fd, chunk.data(), size);
    if (n >= 0) continue;
    if (errno != ENOSPC) break;
    if (size == 1) full = true;
    size = size == 1 ? 1 : size / 2;  // down to the last free byte
  }
  ::close(fd);
  return full;
}

int64_t Count(const std::filesystem::path& db, std::string_view table) {
  Result<internal::Connection> raw = internal::Connection::Open(db.string());
  if (!raw) return -1;
  return raw->QueryInt(fmt::format("SELECT count(*) FROM {}", table), "count").value_or(-1);
}

std::string FullDiskScenario(const std::filesystem::path& dir) {
  if (::unshare(CLONE_NEWNS) != 0) return "skip: " + Errno("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return "skip: " + Errno("making mounts private");
  }
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=1m,mode=0700") != 0) {
    return "skip: " + Errno("mounting a 1 MiB tmpfs");
  }
  const std::filesystem::path db = dir / "iowatch.db";
  Result<Store> store = Store::Open(db);
  if (!store) return "open: " + store.error().ToString();
  const RunRecord first = SampleRun(1);
  Result<int64_t> first_id = store->AddRun(first);
  if (!first_id) return "first AddRun: " + first_id.error().ToString();
  const int64_t ops = Count(db, "run_ops");
  const int64_t metrics = Count(db, "run_metrics");

  if (!FillUp(dir / "filler")) return "could not fill the tmpfs";
  for (int attempt = 0; attempt < 3; ++attempt) {
    Result<int64_t> id = store->AddRun(SampleRun(2 + static_cast<uint64_t>(attempt)));
    if (id) return fmt::format("AddRun on a full disk succeeded (id {})", *id);
    const std::string want = db.string() + ": adding run: database or disk is full (SQLITE_FULL)";
    if (id.error().ToString() != want) return "AddRun error: " + id.error().ToString();
  }
  Baseline baseline;
  baseline.job = "randrw-4k";
  baseline.fingerprint = JobFingerprint(first.result.spec);
  baseline.device = first.device;
  baseline.run_ids = {*first_id};
  baseline.metrics = {{"read", "iops", 1000, 10}};
  if (Result<int64_t> put = store->PutBaseline(baseline); put) {
    return "PutBaseline on a full disk succeeded";
  } else if (put.error().message.find("SQLITE_FULL") == std::string::npos) {
    return "PutBaseline error: " + put.error().ToString();
  }
  // Still readable, and nothing of the failed writes is visible.
  Result<std::vector<RunRecord>> runs = store->RecentRuns("", "", "", 10);
  if (!runs) return "RecentRuns on a full disk: " + runs.error().ToString();
  if (runs->size() != 1 || runs->front().id != *first_id) return "a failed run is visible";
  if (Count(db, "run_ops") != ops || Count(db, "run_metrics") != metrics ||
      Count(db, "baselines") != 0) {
    return "rows of a failed write are visible";
  }

  // Space returns: the same Store writes again.
  std::filesystem::remove(dir / "filler");
  const RunRecord later = SampleRun(9);
  Result<int64_t> later_id = store->AddRun(later);
  if (!later_id) return "AddRun after freeing space: " + later_id.error().ToString();
  Result<RunRecord> got = store->GetRun(*later_id);
  if (!got) return "GetRun after freeing space: " + got.error().ToString();
  if (got->result.read.clat_histogram.Count() != later.result.read.clat_histogram.Count() ||
      got->metrics != later.metrics) {
    return "the run stored after freeing space differs";
  }
  if (!store->PutBaseline(baseline)) return "PutBaseline after freeing space failed";
  if (Count(db, "runs") != 2) return "expected exactly 2 runs at the end";

  // A read-only state directory: Open says so instead of crashing later.
  store = std::unexpected(Error{});  // closes the database (a ro remount needs that)
  if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
    return Errno("remounting read-only");
  }
  Result<Store> readonly = Store::Open(db);
  if (readonly) return "Open on a read-only file system succeeded";
  const std::string want_ro =
      db.string() + ": cannot create or open the database: Read-only file system";
  if (readonly.error().ToString() != want_ro) return "Open error: " + readonly.error().ToString();
  return "";
}

TEST(StoreFullDisk, WritesFailCleanlyAndSucceedOnceSpaceReturns) {
  test_store::ScratchDir scratch;
  int report[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(report[0]);
    const std::string result = FullDiskScenario(scratch.Path());
    const ssize_t ignored = ::write(report[1], result.data(), result.size());
    (void)ignored;
    ::_exit(0);  // no atexit handlers, no destructors of the parent's objects
  }
  ::close(report[1]);
  std::string result;
  char buffer[512];
  for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) > 0;) {
    result.append(buffer, static_cast<size_t>(n));
  }
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child died, status " << status;
  if (result.starts_with("skip: ")) GTEST_SKIP() << result.substr(6);
  EXPECT_EQ(result, "");
}

}  // namespace
}  // namespace iowatch::probes
