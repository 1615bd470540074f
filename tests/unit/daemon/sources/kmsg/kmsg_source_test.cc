// The kernel log's I/O errors in the sample: counted by device, op and kind,
// buffer errors apart, gaps counted, nothing counted twice across a restart
// of the same boot, a new boot starting from zero, and a log that fails.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/sources/filesystem/filesystem_source.h"
#include "daemon/sources/kmsg/kmsg_counts.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/fake_kmsg.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

class KmsgSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iowatch-kmsg-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "proc/sys/kernel/random");
    // The disks the lines name; a line naming another is not counted.
    for (const char* disk : {"loop2", "sda", "sdb", "sdb1", "sdc1"}) {
      std::filesystem::create_directories(dir_ / "sys/class/block" / disk);
    }
    SetBoot("11111111-2222-3333-4444-555555555555");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void SetBoot(const std::string& id) {
    std::ofstream(dir_ / "proc/sys/kernel/random/boot_id") << id << "\n";
  }
  SamplerOptions Options() {
    SamplerOptions o = TestSamplerOptions();
    o.settings.Set(kFilesystemEnabled, false);
    o.settings.Set(kKmsgEnabled, true);
    o.kmsg.open = log_.Opener();
    o.kmsg.state_file = (dir_ / "kmsg-errors.json").string();
    return o;
  }
  std::shared_ptr<const Snapshot> Sample(Sampler& sampler) {
    return sampler.Collect(FileTree(dir_ / "proc"), FileTree(dir_ / "sys"), 1000);
  }
  static uint64_t Count(const Snapshot& s, const std::string& device, const std::string& op,
                        const std::string& error) {
    for (const IoErrorSeries& e : s.kmsg.errors) {
      if (e.device == device && e.op == op && e.error == error) return e.count;
    }
    return 0;
  }
  static const CollectorStatus& Status(const Snapshot& s) {
    return *std::ranges::find(s.collectors, "kmsg", &CollectorStatus::name);
  }

  std::filesystem::path State() const { return dir_ / "kmsg-errors.json"; }
  // A state file of this boot with `errors` (JSON entries) and `sequence`.
  void SaveState(const std::string& errors, const std::string& sequence) {
    std::ofstream(State()) << R"({"boot_id": "11111111-2222-3333-4444-555555555555", "sequence": )"
                           << sequence << R"(, "errors": [)" << errors << "]}";
  }
  static std::string Text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The warning about the state file, which the log prints once.
  static std::string Warning(const Snapshot& s) { return Status(s).parse_error; }

  std::filesystem::path dir_;
  testing::FakeKmsg log_;
};

constexpr char kSdaRead[] = "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0";
constexpr char kSdaEntry[] =
    R"({"device": "sda", "op": "read", "error": "I/O", "buffer": false, "count": 5})";

TEST_F(KmsgSourceTest, CountsRequestErrorsByDeviceOpAndKindAndBufferErrorsApart) {
  log_.Add(1, "loop3: detected capacity change from 0 to 32768", 6);
  log_.Add(2,
           "I/O error, dev loop2, sector 5866 op 0x0:(READ) flags 0x8800 phys_seg 1 prio class 2");
  log_.Add(3,
           "I/O error, dev loop2, sector 5866 op 0x0:(READ) flags 0x8800 phys_seg 1 prio class 2");
  log_.Add(4, "Buffer I/O error on dev loop2, logical block 0, async page read");
  log_.Add(5, "critical medium error, dev sdb, sector 9 op 0x1:(WRITE) flags 0x0 phys_seg 1");
  log_.AddRaw("not a record\n");
  // The same text written to /dev/kmsg by a program (facility user, 1 * 8 + 3): not the kernel's.
  log_.Add(6, "I/O error, dev loop2, sector 1 op 0x0:(READ) flags 0x0", 11);
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_TRUE(Status(*s).success) << Status(*s).error;
  EXPECT_EQ(Count(*s, "loop2", "read", "I/O"), 2u);
  EXPECT_EQ(Count(*s, "sdb", "write", "critical medium"), 1u);
  EXPECT_EQ(Count(*s, "loop2", "read", "buffer"), 1u);
  ASSERT_EQ(s->kmsg.errors.size(), 3u);
  EXPECT_TRUE(std::ranges::find(s->kmsg.errors, "buffer", &IoErrorSeries::error)->buffer);
  EXPECT_EQ(Status(*s).parse_errors_total, 1u);
  EXPECT_NE(Status(*s).parse_error.find("not a record"), std::string::npos);
  EXPECT_EQ(s->kmsg.lost_records, 0u);
}

TEST_F(KmsgSourceTest, ReadsOnlyWhatIsNewAndCountsGaps) {
  log_.Add(10, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0");
  Sampler sampler(Options());
  EXPECT_EQ(Count(*Sample(sampler), "sda", "read", "I/O"), 1u);
  EXPECT_EQ(Count(*Sample(sampler), "sda", "read", "I/O"), 1u);  // nothing new: nothing added
  log_.Overrun();
  log_.Add(15, "I/O error, dev sda, sector 2 op 0x0:(READ) flags 0x0");  // 11..14 overwritten
  const auto s = Sample(sampler);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 2u);
  EXPECT_EQ(s->kmsg.lost_records, 4u);
}

TEST_F(KmsgSourceTest, ARestartInTheSameBootGoesOnFromTheSavedCounts) {
  log_.Add(1, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0");
  log_.Add(2, "I/O error, dev sda, sector 2 op 0x1:(WRITE) flags 0x0");
  {
    Sampler first(Options());
    EXPECT_EQ(Count(*Sample(first), "sda", "read", "I/O"), 1u);
  }
  log_.Add(3, "I/O error, dev sda, sector 3 op 0x0:(READ) flags 0x0");
  Sampler restarted(Options());  // reads the ring buffer from its first record again
  const auto s = Sample(restarted);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 2u);  // 1 and 3, not 1 twice
  EXPECT_EQ(Count(*s, "sda", "write", "I/O"), 1u);
}

TEST_F(KmsgSourceTest, TheRateLimitsHeldBackLinesAreCountedAndKeptAcrossARestart) {
  log_.Add(1, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0");
  log_.Add(2, "blk_print_req_error: 12 callbacks suppressed", 4);
  log_.Add(3, "buffer_io_error: 5 callbacks suppressed", 4);
  log_.Add(4, "ext4_end_bio: 7 callbacks suppressed", 4);  // another call site's limit
  {
    Sampler first(Options());
    const auto s = Sample(first);
    EXPECT_EQ(s->kmsg.suppressed_requests, 12u);
    EXPECT_EQ(s->kmsg.suppressed_buffers, 5u);
  }
  log_.Add(5, "blk_print_req_error: 3 callbacks suppressed", 4);
  Sampler restarted(Options());
  const auto s = Sample(restarted);
  EXPECT_EQ(s->kmsg.suppressed_requests, 15u);  // 12 saved, not read twice, and 3 new
  EXPECT_EQ(s->kmsg.suppressed_buffers, 5u);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 1u);
}

TEST_F(KmsgSourceTest, FilesystemShutdownsAreCountedAndKeptAcrossARestart) {
  log_.Add(1, "XFS (sdb1): User initiated shutdown received.", 4);
  log_.Add(2,
           "XFS (sdb1): Log I/O Error (0x6) detected at xfs_fs_goingdown+0x63/0xb0 "
           "(fs/xfs/xfs_fsops.c:475).  Shutting down filesystem.",
           1);
  log_.Add(3, "EXT4-fs (sdc1): shut down requested (2)", 1);
  {
    Sampler first(Options());
    const auto s = Sample(first);
    EXPECT_EQ(s->kmsg.shutdowns,
              (std::vector<FilesystemShutdownSeries>{{"sdb1", "xfs", 1}, {"sdc1", "ext4", 1}}));
  }
  log_.Add(4,
           "XFS (sdb1): Metadata I/O Error (0x1) detected at xfs_trans_read_buf_map+0x1d6/0x380 "
           "(fs/xfs/xfs_trans_buf.c:296).  Shutting down filesystem.",
           1);
  Sampler restarted(Options());
  EXPECT_EQ(Sample(restarted)->kmsg.shutdowns,
            (std::vector<FilesystemShutdownSeries>{{"sdb1", "xfs", 2}, {"sdc1", "ext4", 1}}));
}

TEST_F(KmsgSourceTest, ScsiSenseReportsAreCountedByDiskAndKeyAndKeptAcrossARestart) {
  log_.Add(1, "sd 2:0:0:0: [sdb] tag#18 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK", 6);
  log_.Add(2, "sd 2:0:0:0: [sdb] tag#18 Sense Key : Medium Error [current] [descriptor] ", 6);
  log_.Add(3, "sd 2:0:0:0: [sdb] tag#18 Add. Sense: Unrecovered read error", 6);
  log_.Add(4, "critical medium error, dev sdb, sector 2048 op 0x0:(READ) flags 0x0", 3);
  log_.Add(5, "sd 0:0:0:0: [sda] Sense Key : Unit Attention [current] ", 6);
  {
    Sampler first(Options());
    const auto s = Sample(first);
    EXPECT_EQ(s->kmsg.senses, (std::vector<ScsiSenseSeries>{{"sda", "Unit Attention", 1},
                                                            {"sdb", "Medium Error", 1}}));
    EXPECT_EQ(Count(*s, "sdb", "read", "critical medium"), 1u);  // the request's line as well
  }
  log_.Add(6, "sd 2:0:0:0: [sdb] tag#3 Sense Key : Medium Error [current] ", 6);
  Sampler restarted(Options());
  EXPECT_EQ(
      Sample(restarted)->kmsg.senses,
      (std::vector<ScsiSenseSeries>{{"sda", "Unit Attention", 1}, {"sdb", "Medium Error", 2}}));
}

TEST_F(KmsgSourceTest, CountsSavedBeforeTheSuppressedAndShutdownFieldsAreRead) {
  std::ofstream(dir_ / "kmsg-errors.json")
      << R"({"boot_id": "11111111-2222-3333-4444-555555555555", "sequence": 3, "errors": [)"
      << R"({"device": "sda", "op": "read", "error": "I/O", "buffer": false, "count": 4}]})";
  log_.Add(3, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0");  // counted before
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 4u);
  EXPECT_EQ(s->kmsg.suppressed_requests, 0u);
  EXPECT_TRUE(s->kmsg.shutdowns.empty());
  EXPECT_TRUE(s->kmsg.senses.empty());
}

TEST_F(KmsgSourceTest, ForgedLinesAndLinesOfNoDiskThereIsMakeNoSeries) {
  // What an unprivileged user makes the kernel log (overlayfs quoting its
  // mount option; this VM's kernel 6.18), at the kernel's priority.
  log_.Add(1,
           "overlayfs: failed to resolve '/x error, dev sda, sector 1 op 0x0:(READ) flags 0x0 "
           "phys_seg 1 prio class 0': -2");
  log_.Add(2,
           "overlayfs: failed to resolve 'sd 2:0:0:0: [sdb] tag#1 Sense Key : Medium Error "
           "[current]': -2");
  log_.Add(3,
           "overlayfs: failed to resolve 'XFS (sdb1): Log I/O Error (0x2) detected at x+0x1/0x2 "
           "(fs/xfs/x.c:1).  Shutting down filesystem.': -2");
  // Whole lines of a disk there is not.
  log_.Add(4, "I/O error, dev sdz, sector 1 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0");
  log_.Add(5, "Buffer I/O error on dev sdz1, logical block 0, async page read");
  log_.Add(6, "sd 9:0:0:0: [sdz] tag#1 Sense Key : Medium Error [current] ");
  log_.Add(7, "EXT4-fs (sdz1): shut down requested (2)", 1);
  // A real one among them still counts.
  log_.Add(8, "I/O error, dev sda, sector 2 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0");
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_EQ(s->kmsg.errors, (std::vector<IoErrorSeries>{{"sda", "read", "I/O", false, 1}}));
  EXPECT_TRUE(s->kmsg.senses.empty());
  EXPECT_TRUE(s->kmsg.shutdowns.empty());
}

TEST_F(KmsgSourceTest, SavedSeriesOfNamesNoKernelPrintsAreDropped) {
  // A file written when forged kinds were counted: those are not loaded again.
  // Its sequence is one the log has, and above its counts' total (a file
  // failing either is not trusted at all).
  log_.Add(20, "usb 1-1: new high-speed USB device number 2 using xhci_hcd");
  std::ofstream(dir_ / "kmsg-errors.json")
      << R"({"boot_id": "11111111-2222-3333-4444-555555555555", "sequence": 20, "errors": [)"
      << R"({"device": "sda", "op": "read", "error": "overlayfs: failed to resolve '/x",)"
      << R"( "buffer": false, "count": 1},)"
      << R"({"device": "sda", "op": "read", "error": "I/O", "buffer": false, "count": 4},)"
      << R"({"device": "sda1", "op": "read", "error": "I/O", "buffer": true, "count": 2},)"
      << R"({"device": "sda1", "op": "read", "error": "buffer", "buffer": true, "count": 3}],)"
      << R"( "senses": [{"device": "sdb", "sense_key": "Medium Error", "count": 1},)"
      << R"({"device": "sdb", "sense_key": "Medium Error [current]': -2", "count": 1}],)"
      << R"( "shutdowns": [{"device": "sdb1", "fstype": "xfs", "count": 1},)"
      << R"({"device": "sdb1", "fstype": "zfs", "count": 1}]})";
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_EQ(s->kmsg.errors, (std::vector<IoErrorSeries>{{"sda", "read", "I/O", false, 4},
                                                        {"sda1", "read", "buffer", true, 3}}));
  EXPECT_EQ(s->kmsg.senses, (std::vector<ScsiSenseSeries>{{"sdb", "Medium Error", 1}}));
  EXPECT_EQ(s->kmsg.shutdowns, (std::vector<FilesystemShutdownSeries>{{"sdb1", "xfs", 1}}));
}

TEST_F(KmsgSourceTest, ANewBootStartsFromNothing) {
  log_.Add(1, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0");
  {
    Sampler before(Options());
    EXPECT_EQ(Count(*Sample(before), "sda", "read", "I/O"), 1u);
  }
  SetBoot("99999999-2222-3333-4444-555555555555");
  testing::FakeKmsg after_reboot;
  after_reboot.Add(1, "I/O error, dev sdb, sector 1 op 0x0:(READ) flags 0x0");
  SamplerOptions o = Options();
  o.kmsg.open = after_reboot.Opener();
  Sampler after(o);
  const auto s = Sample(after);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 0u);
  EXPECT_EQ(Count(*s, "sdb", "read", "I/O"), 1u);
}

TEST_F(KmsgSourceTest, AFailingLogFailsTheCollectorWithItsCauseAndIsOpenedAgain) {
  log_.Add(1, "I/O error, dev sda, sector 1 op 0x0:(READ) flags 0x0");
  log_.Fail();
  Sampler sampler(Options());
  const auto failed = Sample(sampler);
  EXPECT_FALSE(Status(*failed).success);
  EXPECT_NE(Status(*failed).error.find("/dev/kmsg"), std::string::npos) << Status(*failed).error;
  EXPECT_EQ(Count(*failed, "sda", "read", "I/O"), 1u);  // what was read before still counts
  const auto again = Sample(sampler);                   // a new reader, from the first record
  EXPECT_TRUE(Status(*again).success) << Status(*again).error;
  EXPECT_EQ(Count(*again, "sda", "read", "I/O"), 1u);  // not counted twice
}

TEST_F(KmsgSourceTest, AnUnopenableLogSaysWhy) {
  SamplerOptions o = Options();
  o.kmsg.open = nullptr;
  o.kmsg.path = (dir_ / "no-such-kmsg").string();
  Sampler sampler(o);
  const auto s = Sample(sampler);
  EXPECT_FALSE(Status(*s).success);
  EXPECT_NE(Status(*s).error.find("no-such-kmsg"), std::string::npos) << Status(*s).error;
}

// The state file as a symlink: the file it names was read as the counts
// (and would have been replaced by rename had it been a regular file, or
// written through had it been a device).
TEST_F(KmsgSourceTest, AStateFileThatIsASymlinkIsSetAsideNotFollowed) {
  SaveState(kSdaEntry, "7");
  std::filesystem::rename(State(), dir_ / "outside.json");
  std::filesystem::create_symlink(dir_ / "outside.json", State());
  const std::string outside = Text(dir_ / "outside.json");
  log_.Add(1, kSdaRead);
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 1u);  // the log's one, not the 5 outside
  EXPECT_EQ(Warning(*s), State().string() +
                             ": cannot open the kmsg counts: expected a regular file, found a "
                             "symbolic link; counting this boot's records again from the kernel "
                             "log, the file kept as " +
                             State().string() + ".bad");
  EXPECT_EQ(Status(*s).parse_errors_total, 1u);
  EXPECT_TRUE(std::filesystem::is_symlink(State().string() + ".bad"));
  EXPECT_EQ(Text(dir_ / "outside.json"), outside);
  EXPECT_FALSE(std::filesystem::is_symlink(State()));
  EXPECT_NE(Text(State()).find(R"("count":1)"), std::string::npos) << Text(State());
}

// A FIFO as the state file: the save opened it and waited for a reader
// forever (here the test holds a reader, so it wrote into it instead).
TEST_F(KmsgSourceTest, AStateFileThatIsAFifoIsNeitherWaitedOnNorWritten) {
  ASSERT_EQ(::mkfifo(State().c_str(), 0600), 0);
  const int reader = ::open(State().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  log_.Add(1, kSdaRead);
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  char byte = 0;
  EXPECT_NE(::read(reader, &byte, 1), 1) << "the counts went into the FIFO";
  ::close(reader);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 1u);
  EXPECT_NE(Warning(*s).find("expected a regular file, found a FIFO"), std::string::npos)
      << Warning(*s);
  EXPECT_TRUE(std::filesystem::is_fifo(State().string() + ".bad"));
  EXPECT_TRUE(std::filesystem::is_regular_file(State()));
}

// iowatch health reads the file and never writes: a bad one is ignored with
// the warning, not moved.
TEST_F(KmsgSourceTest, ACommandThatOnlyReadsIgnoresABadStateFileWithoutMovingIt) {
  std::ofstream(State()) << "{not json";
  log_.Add(1, kSdaRead);
  SamplerOptions o = Options();
  o.kmsg.save = false;
  Sampler sampler(o);
  const auto s = Sample(sampler);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 1u);
  EXPECT_NE(Warning(*s).find(State().string() + ":1: expected iowatch's kmsg counts"),
            std::string::npos)
      << Warning(*s);
  EXPECT_EQ(Text(State()), "{not json");
  EXPECT_FALSE(std::filesystem::exists(State().string() + ".bad"));
}

// 60 MiB of '[' took 4.6 GiB to parse (a kill at every start under
// MemoryMax=256M); within the size bound, the nesting is refused before
// anything is built.
TEST_F(KmsgSourceTest, ADeeplyNestedStateFileIsRefusedBeforeItIsBuilt) {
  std::ofstream(State()) << std::string(kMaxKmsgCountsBytes, '[');
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto read = ReadKmsgCounts(State().string());
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().ToString(),
            State().string() +
                ":1: expected iowatch's kmsg counts (boot_id, sequence, errors): nested deeper "
                "than 3 levels");
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 16 << 10) << "KiB more at the peak";
  std::ofstream(State(), std::ios::app) << "[";
  EXPECT_EQ(ReadKmsgCounts(State().string()).error().ToString(),
            State().string() + ": cannot read the kmsg counts: longer than 1048576 bytes");
}

TEST_F(KmsgSourceTest, AFieldOfTheWrongTypeOrRangeIsNamed) {
  const auto error = [&](const std::string& entry, const std::string& sequence = "9") {
    SaveState(entry, sequence);
    const auto read = ReadKmsgCounts(State().string());
    return read ? std::string("read") : read.error().message;
  };
  const std::string expected = "expected iowatch's kmsg counts (boot_id, sequence, errors): ";
  EXPECT_EQ(
      error(R"({"device": "sda", "op": "read", "error": "I/O", "buffer": false, "count": -1})"),
      expected + R"("count": expected an integer of at least 0, found -1)");
  EXPECT_EQ(error(R"({"device": "sda", "op": "read", "error": "I/O", "buffer": 0, "count": 1})"),
            expected + R"("buffer": expected true or false, found number)");
  EXPECT_EQ(error(R"({"device": "", "op": "read", "error": "I/O", "buffer": false, "count": 1})"),
            expected + R"("device": expected 1 to 256 bytes, found 0)");
  EXPECT_EQ(error("7"), expected + R"(expected an object with "device", found number)");
  EXPECT_EQ(error(kSdaEntry, "-3"),
            expected + R"("sequence": expected an integer of at least 0, found -3)");
  // Five errors counted by record 2: three records at most (0, 1, 2).
  EXPECT_EQ(error(kSdaEntry, "2"),
            expected + R"(the counts add up to 5, more than the records up to "sequence" (2))");
  EXPECT_EQ(error(kSdaEntry, "4"), "read");
}

TEST_F(KmsgSourceTest, ASeriesTheStateFileNamesTwiceIsOneSeries) {
  SaveState(std::string(kSdaEntry) + "," +
                R"({"device": "sda", "op": "read", "error": "I/O", "buffer": false, "count": 3},)" +
                R"({"device": "sdb", "op": "read", "error": "I/O", "buffer": false, "count": 1})",
            "20");
  log_.Add(20, kSdaRead);  // counted before
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_EQ(s->kmsg.errors, (std::vector<IoErrorSeries>{{"sda", "read", "I/O", false, 5},
                                                        {"sdb", "read", "I/O", false, 1}}));
}

// A sequence of 2^64-1 kept every later record from being counted: a boot's
// records are numbered from 0 without gaps, so one above the newest the log
// holds was never printed, and the file is not this boot's counts.
TEST_F(KmsgSourceTest, ASavedSequenceAboveTheNewestRecordCountsTheLogAgain) {
  SaveState("", "18446744073709551615");
  log_.Add(1, kSdaRead);
  log_.Add(2, kSdaRead);
  Sampler sampler(Options());
  const auto s = Sample(sampler);
  EXPECT_EQ(Count(*s, "sda", "read", "I/O"), 2u);
  EXPECT_EQ(Warning(*s), State().string() +
                             ": \"sequence\" 18446744073709551615 is above the kernel log's "
                             "newest record (2); counting this boot's records again from the "
                             "kernel log, the file kept as " +
                             State().string() + ".bad");
  log_.Add(3, kSdaRead);
  EXPECT_EQ(Count(*Sample(sampler), "sda", "read", "I/O"), 3u);
  Sampler restarted(Options());  // the file saved now is sound
  const auto again = Sample(restarted);
  EXPECT_EQ(Count(*again, "sda", "read", "I/O"), 3u);
  EXPECT_EQ(Warning(*again), "");
}

}  // namespace
}  // namespace iowatch::daemon
