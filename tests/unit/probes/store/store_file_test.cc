// The store's file: only a regular file is opened (a FIFO blocked `sweep
// --list` and `baseline list` forever), and CheckFile tells when the file
// the store has open is no longer the one at its path, whole (`rm` or
// `truncate -s0` under the daemon).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "probes/store/store.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

using test_store::SampleRun;
using test_store::ScratchDir;

// `open` run on another thread: a FIFO must be refused, not waited on.
Result<Store> OpenWithin10s(const std::function<Result<Store>()>& open,
                            const std::filesystem::path& fifo) {
  auto opened = std::async(std::launch::async, open);
  if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "opening the store blocked on a FIFO";
    // Let the blocked open go: a writer for a reader, a reader for a writer.
    for (const int flags : {O_WRONLY | O_NONBLOCK, O_RDONLY | O_NONBLOCK}) {
      const int fd = ::open(fifo.c_str(), flags);
      if (fd >= 0) ::close(fd);
    }
  }
  return opened.get();
}

TEST(StoreFile, AFifoOrADeviceIsRefusedBeforeSqliteOpensIt) {
  ScratchDir dir;
  ASSERT_EQ(::mkfifo(dir.Db().c_str(), 0600), 0);
  const std::string expected =
      dir.Db().string() + ": cannot use the database: expected a regular file, found a FIFO";
  for (const bool read_only : {true, false}) {
    const Result<Store> store = OpenWithin10s(
        [&] { return read_only ? Store::OpenReadOnly(dir.Db()) : Store::Open(dir.Db()); },
        dir.Db());
    ASSERT_FALSE(store) << read_only;
    EXPECT_EQ(store.error().ToString(), expected) << read_only;
    EXPECT_FALSE(Store::IsDamagedStore(store.error()));  // never moved aside
  }
  std::filesystem::remove(dir.Db());
  std::filesystem::create_symlink("/dev/zero", dir.Db());
  const Result<Store> device = Store::OpenReadOnly(dir.Db());
  ASSERT_FALSE(device);
  EXPECT_EQ(device.error().ToString(), dir.Db().string() +
                                           ": cannot use the database: expected a regular "
                                           "file, found a character device");
}

TEST(StoreFile, AFifoAsTheWriteAheadLogIsRefused) {
  ScratchDir dir;
  ASSERT_TRUE(Store::Open(dir.Db()));  // a real store, closed (no -wal left)
  const std::filesystem::path wal = dir.Db().string() + "-wal";
  ASSERT_EQ(::mkfifo(wal.c_str(), 0600), 0);
  const Result<Store> store = OpenWithin10s([&] { return Store::OpenReadOnly(dir.Db()); }, wal);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().ToString(),
            wal.string() + ": cannot use the database: expected a regular file, found a FIFO");
}

TEST(StoreFile, AStoreStillAtItsPathChecksOut) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_TRUE(store->CheckFile());
  ASSERT_TRUE(store->AddRun(SampleRun(1)));
  EXPECT_TRUE(store->CheckFile());
  Result<Store> reader = Store::OpenReadOnly(dir.Db());
  ASSERT_TRUE(reader) << reader.error().ToString();
  EXPECT_TRUE(reader->CheckFile());
}

// `rm iowatch.db` under the daemon: SQLite went on writing into the removed
// file, store_up stayed 1 and every run was gone at the next start.
TEST(StoreFile, ARemovedFileIsNotFound) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE(store->AddRun(SampleRun(1)));
  std::filesystem::remove(dir.Db());
  const Status checked = store->CheckFile();
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(checked.error().ToString(),
            dir.Db().string() +
                ": was removed while open (what SQLite writes now would be lost with it)");
}

TEST(StoreFile, AReplacedFileIsAnError) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  const std::filesystem::path other = dir.Path() / "other.db";
  ASSERT_TRUE(Store::Open(other));
  std::filesystem::rename(other, dir.Db());
  const Status checked = store->CheckFile();
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().code, ErrorCode::kIo);
  EXPECT_EQ(checked.error().ToString(),
            dir.Db().string() + ": was replaced by another file while open");
  EXPECT_FALSE(Store::IsDamagedStore(checked.error()));
}

// `truncate -s0 iowatch.db` under the daemon: the same silent loss.
TEST(StoreFile, ATruncatedFileIsDamaged) {
  for (const int cut : {0, 1, 2}) {
    ScratchDir dir;
    Result<Store> store = Store::Open(dir.Db());
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE(store->AddRun(SampleRun(1)));
    const auto whole = static_cast<off_t>(std::filesystem::file_size(dir.Db()));
    ASSERT_GE(whole, 4096);  // page 1 is on disk from the start
    const off_t size = cut == 0 ? 0 : cut == 1 ? 100 : whole - 1;
    ASSERT_EQ(::truncate(dir.Db().c_str(), size), 0);
    const Status checked = store->CheckFile();
    ASSERT_FALSE(checked) << size;
    EXPECT_TRUE(Store::IsDamagedStore(checked.error())) << size;  // moved aside by the daemon
    EXPECT_EQ(checked.error().ToString(),
              fmt::format("{}: was truncated while open to {} bytes (a database is whole "
                          "pages of 4096 bytes)",
                          dir.Db().string(), size));
  }
}

}  // namespace
}  // namespace iowatch::probes
