// Job options in fio 3.33's names and syntaxes. Where fio's behaviour is not
// obvious from its documentation, the expectation was checked against fio
// 3.33 itself (ioengine=null, reading total_ios / io_bytes from its JSON):
// "4KiB" is 4000 bytes, "bs=8k," leaves writes at 4096, "rate_iops=100,"
// paces reads only, direct=true and time_based=yes are refused, and
// "runtime=1sec" runs for 1 microsecond.
#include "probes/spec/job_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <ostream>
#include <set>
#include <utility>

namespace iowatch::probes {

// Readable failures for EXPECT_EQ on whole specs (found by ADL).
static void PrintTo(const JobSpec& spec, std::ostream* os) {
  *os << "name=" << spec.name << ";" << JobFingerprint(spec);
}

static void PrintTo(const JobOption& option, std::ostream* os) {
  *os << option.name << "=" << option.value;
}

namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using Options = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// Applies `options` in order to a default spec; every one must succeed.
JobSpec Applied(Options options) {
  JobSpec spec;
  for (const auto& [name, value] : options) {
    const auto ok = ApplyJobOption(spec, name, value);
    EXPECT_TRUE(ok.has_value()) << name << "=" << value << ": " << ok.error().message;
  }
  return spec;
}

// The error for one bad option; it must name the option first and quote the
// offending value, so a user can find it in a long job.
std::string ApplyError(std::string_view name, std::string_view value) {
  JobSpec spec;
  const auto ok = ApplyJobOption(spec, name, value);
  if (ok.has_value()) {
    ADD_FAILURE() << name << "=" << value << " was accepted";
    return "";
  }
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalidArgument) << ok.error().message;
  EXPECT_TRUE(ok.error().message.starts_with(std::string(name) + ": ")) << ok.error().message;
  EXPECT_NE(ok.error().message.find(fmt::format("found \"{}\"", value)), std::string::npos)
      << ok.error().message;
  return ok.error().message;
}

// A spec that passes validation, for tests that change one thing.
JobSpec ValidSpec() {
  JobSpec spec;
  spec.filename = "/dev/null";
  return spec;
}

std::string ValidationError(const JobSpec& spec) {
  const auto ok = ValidateJobSpec(spec);
  if (ok.has_value()) {
    ADD_FAILURE() << "accepted: " << JobFingerprint(spec);
    return "";
  }
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalidArgument);
  return ok.error().message;
}

nanoseconds Time(std::string_view text, nanoseconds bare_unit = seconds(1)) {
  const auto t = ParseFioTime(text, bare_unit);
  EXPECT_TRUE(t.has_value()) << text << ": " << t.error().message;
  return t.value_or(nanoseconds(-1));
}

Error TimeError(std::string_view text, nanoseconds bare_unit = seconds(1)) {
  const auto t = ParseFioTime(text, bare_unit);
  if (t.has_value()) {
    ADD_FAILURE() << text << " gave " << t->count() << "ns";
    return {};
  }
  EXPECT_NE(t.error().message.find(fmt::format("found \"{}\"", text)), std::string::npos)
      << t.error().message;
  return t.error();
}

TEST(JobSpecDefaults, AreFios) {
  const JobSpec spec;
  EXPECT_EQ(spec.rw, RwMode::kRead);
  EXPECT_EQ(spec.block_size, 4096u);
  EXPECT_EQ(spec.iodepth, 1u);
  EXPECT_EQ(spec.engine, EngineKind::kPsync);
  EXPECT_FALSE(spec.direct);
  EXPECT_EQ(spec.rwmixread, 50u);
  EXPECT_TRUE(spec.randrepeat);
  EXPECT_FALSE(spec.randseed.has_value());
}

TEST(RwMode, Predicates) {
  struct Row {
    RwMode mode;
    std::string_view name;
    bool random, reads, writes;
  };
  for (const Row& row : {Row{RwMode::kRead, "read", false, true, false},
                         Row{RwMode::kWrite, "write", false, false, true},
                         Row{RwMode::kRandRead, "randread", true, true, false},
                         Row{RwMode::kRandWrite, "randwrite", true, false, true},
                         Row{RwMode::kReadWrite, "rw", false, true, true},
                         Row{RwMode::kRandReadWrite, "randrw", true, true, true}}) {
    EXPECT_EQ(ToString(row.mode), row.name);
    EXPECT_EQ(IsRandom(row.mode), row.random) << row.name;
    EXPECT_EQ(ReadsData(row.mode), row.reads) << row.name;
    EXPECT_EQ(WritesData(row.mode), row.writes) << row.name;
  }
}

TEST(EngineKind, ToStringIsFiosName) {
  EXPECT_EQ(ToString(EngineKind::kIoUring), "io_uring");
  EXPECT_EQ(ToString(EngineKind::kPsync), "psync");
  EXPECT_EQ(ToString(EngineKind::kNull), "null");
  EXPECT_EQ(ToString(EngineKind::kLibaio), "libaio");
}

TEST(ApplyJobOption, Name) {
  EXPECT_EQ(Applied({{"name", "seq read 1"}}).name, "seq read 1");
  ApplyError("name", "");
  EXPECT_NE(ApplyError("name", "a/b").find("'/'"), std::string::npos);
}

TEST(ApplyJobOption, FilenameAndDirectory) {
  EXPECT_EQ(Applied({{"filename", "/dev/nvme0n1"}}).filename, "/dev/nvme0n1");
  EXPECT_EQ(Applied({{"directory", "/var/lib/iowatch"}}).directory, "/var/lib/iowatch");
  // fio separates several files with ':' and reads "\:" as a colon in a path.
  EXPECT_EQ(Applied({{"filename", R"(/dev/disk/by-path/pci-0000\:00\:1f.2-ata-1)"}}).filename,
            "/dev/disk/by-path/pci-0000:00:1f.2-ata-1");
  EXPECT_EQ(Applied({{"directory", R"(/mnt/a\:b)"}}).directory, "/mnt/a:b");
  EXPECT_EQ(Applied({{"filename", R"(/tmp/back\slash)"}}).filename, R"(/tmp/back\slash)");
  EXPECT_NE(ApplyError("filename", "/dev/sda:/dev/sdb").find("one path"), std::string::npos);
  EXPECT_NE(ApplyError("directory", "/a:/b").find("one path"), std::string::npos);
  ApplyError("filename", "");
  ApplyError("directory", "");
}

TEST(ApplyJobOption, RwEveryValueAndTheReadwriteAlias) {
  EXPECT_EQ(Applied({{"rw", "read"}}).rw, RwMode::kRead);
  EXPECT_EQ(Applied({{"rw", "write"}}).rw, RwMode::kWrite);
  EXPECT_EQ(Applied({{"rw", "randread"}}).rw, RwMode::kRandRead);
  EXPECT_EQ(Applied({{"rw", "randwrite"}}).rw, RwMode::kRandWrite);
  EXPECT_EQ(Applied({{"rw", "rw"}}).rw, RwMode::kReadWrite);
  EXPECT_EQ(Applied({{"rw", "readwrite"}}).rw, RwMode::kReadWrite);
  EXPECT_EQ(Applied({{"rw", "randrw"}}).rw, RwMode::kRandReadWrite);
  EXPECT_EQ(Applied({{"readwrite", "randwrite"}}).rw, RwMode::kRandWrite);  // fio's alias
}

TEST(ApplyJobOption, RwBadValues) {
  EXPECT_EQ(ApplyError("rw", "random"),
            R"(rw: expected one of read, write, randread, randwrite, rw, readwrite, randrw, )"
            R"(each with an optional ":N", found "random")");
  // fio's ddir_seq_nr (randread:8) is another feature: refused, saying so.
  EXPECT_NE(ApplyError("rw", "randread:8").find("ddir_seq_nr"), std::string::npos);
  EXPECT_EQ(ApplyError("rw", "read:x"),
            R"(rw: expected a size up to 1g after "read:", such as "read:8k" or "read:-8k", )"
            R"(found "read:x")");
  ApplyError("rw", "read:2g");
  ApplyError("rw", "read:");
  ApplyError("rw", "trim");
  ApplyError("rw", "READ");
  ApplyError("rw", "");
  EXPECT_TRUE(ApplyError("readwrite", "x").starts_with("readwrite: "));
}

TEST(ApplyJobOption, RwOffsetIncrement) {
  EXPECT_EQ(Applied({{"rw", "read:8k"}}).rw_sequence_add, 8192);
  const JobSpec backward = Applied({{"rw", "write:-200k"}});
  EXPECT_EQ(backward.rw, RwMode::kWrite);
  EXPECT_EQ(backward.rw_sequence_add, -204800);
  EXPECT_EQ(Applied({{"rw", "read:8k"}, {"rw", "read"}}).rw_sequence_add, 0);  // later wins whole
  JobSpec spec = Applied({{"rw", "read:-8k"}, {"filename", "/f"}});
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  spec.direct = true;
  spec.rw_sequence_add = -1000;
  EXPECT_EQ(ValidateJobSpec(spec).error().message,
            "rw: direct=1 needs an offset increment that is a multiple of 512 bytes, found -1000");
  spec.rw_sequence_add = 4096;
  spec.rw = RwMode::kRandRead;
  EXPECT_EQ(ValidateJobSpec(spec).error().message,
            "rw: randread:N needs a sequential mode (read, write, rw)");
}

TEST(ApplyJobOption, BlockSize) {
  EXPECT_EQ(Applied({{"bs", "4k"}}).block_size, 4096u);
  EXPECT_EQ(Applied({{"bs", "4KB"}}).block_size, 4096u);
  EXPECT_EQ(Applied({{"bs", "4KiB"}}).block_size, 4000u);  // fio 3.33: 1024 I/Os of 4096000 bytes
  EXPECT_EQ(Applied({{"bs", "512"}}).block_size, 512u);
  EXPECT_EQ(Applied({{"bs", "1m"}}).block_size, 1048576u);
  EXPECT_EQ(Applied({{"bs", "64m"}}).block_size, 64u << 20);
  EXPECT_EQ(Applied({{"blocksize", "16k"}}).block_size, 16384u);
  EXPECT_EQ(Applied({{"bs", "8k,8k"}}).block_size, 8192u);
  EXPECT_EQ(Applied({{"bs", "8k,8192"}}).block_size, 8192u);
  EXPECT_EQ(Applied({{"bs", "8k,8k,8k"}}).block_size, 8192u);  // read,write,trim
}

TEST(ApplyJobOption, BlockSizeBadValues) {
  EXPECT_EQ(ApplyError("bs", "4q"),
            R"(bs: expected a size such as "4k", "64KiB" or "1m", found "4q")");
  EXPECT_NE(ApplyError("bs", "4k,8k").find("one block size"), std::string::npos);
  EXPECT_NE(ApplyError("bs", "8k,4k,4k").find("one block size"), std::string::npos);
  // fio leaves the missing direction at 4096: two sizes again.
  ApplyError("bs", "8k,");
  ApplyError("bs", ",8k");
  ApplyError("bs", "4k,4q");
  ApplyError("bs", "0");
  ApplyError("bs", "67108865");
  ApplyError("bs", "1g");
  ApplyError("bs", "");
  ApplyError("bs", "-4k");
  ApplyError("bs", "1.5k");
  EXPECT_TRUE(ApplyError("blocksize", "x").starts_with("blocksize: "));
  EXPECT_NE(ApplyError("bs", "99999999999999999999").find("out of range"), std::string::npos);
}

TEST(ApplyJobOption, Sizes) {
  EXPECT_EQ(Applied({{"size", "1g"}}).size, 1u << 30);
  EXPECT_EQ(Applied({{"size", "10GiB"}}).size, 10'000'000'000u);
  EXPECT_EQ(Applied({{"size", "0"}}).size, 0u);
  EXPECT_EQ(Applied({{"offset", "1m"}}).offset, 1u << 20);
  EXPECT_EQ(Applied({{"fileoffset", "4096"}}).offset, 4096u);
  EXPECT_EQ(Applied({{"io_size", "2g"}}).io_size, 2u << 30);
  EXPECT_EQ(Applied({{"io_limit", "3m"}}).io_size, 3u << 20);
  for (const std::string_view name : {"size", "offset", "fileoffset", "io_size", "io_limit"}) {
    ApplyError(name, "1x");
    ApplyError(name, "50%");  // fio's percentages are not supported
    ApplyError(name, "-1");
    ApplyError(name, "");
    ApplyError(name, "99999999999999999999");
  }
}

TEST(ApplyJobOption, Iodepth) {
  EXPECT_EQ(Applied({{"iodepth", "1"}}).iodepth, 1u);
  EXPECT_EQ(Applied({{"iodepth", "32"}}).iodepth, 32u);
  EXPECT_EQ(Applied({{"iodepth", "4096"}}).iodepth, 4096u);
  EXPECT_EQ(ApplyError("iodepth", "0"), R"(iodepth: expected 1 to 4096, found "0")");
  ApplyError("iodepth", "4097");
  ApplyError("iodepth", "1k");
  ApplyError("iodepth", "-1");
  ApplyError("iodepth", "+2");
  ApplyError("iodepth", "");
  ApplyError("iodepth", "99999999999");
}

TEST(ApplyJobOption, Ioengine) {
  EXPECT_EQ(Applied({{"ioengine", "io_uring"}}).engine, EngineKind::kIoUring);
  EXPECT_EQ(Applied({{"ioengine", "psync"}}).engine, EngineKind::kPsync);
  EXPECT_EQ(Applied({{"ioengine", "null"}}).engine, EngineKind::kNull);
  EXPECT_EQ(Applied({{"ioengine", "libaio"}}).engine, EngineKind::kLibaio);
  EXPECT_EQ(ApplyError("ioengine", "sync"),
            R"(ioengine: expected one of io_uring, libaio, psync, null, found "sync")");
  ApplyError("ioengine", "posixaio");  // fio has it; iowatch does not
  ApplyError("ioengine", "IO_URING");
  ApplyError("ioengine", "");
}

TEST(ApplyJobOption, BooleansTakeZeroOrOneAsFioDoes) {
  EXPECT_TRUE(Applied({{"direct", "1"}}).direct);
  EXPECT_FALSE(Applied({{"direct", "1"}, {"direct", "0"}}).direct);
  EXPECT_FALSE(Applied({{"randrepeat", "0"}}).randrepeat);
  EXPECT_TRUE(Applied({{"randrepeat", "0"}, {"randrepeat", "1"}}).randrepeat);
  // fio 3.33: "failed parsing direct=true", "option direct requires an argument".
  for (const std::string_view name : {"direct", "randrepeat"}) {
    for (const std::string_view bad : {"true", "false", "yes", "on", "off", "2", ""}) {
      EXPECT_EQ(ApplyError(name, bad), fmt::format("{}: expected 0 or 1, found \"{}\"", name, bad));
    }
  }
}

TEST(ApplyJobOption, TimeBasedIsAFlag) {
  EXPECT_TRUE(Applied({{"time_based", ""}}).time_based);
  EXPECT_TRUE(Applied({{"time_based", "1"}}).time_based);
  EXPECT_FALSE(Applied({{"time_based", ""}, {"time_based", "0"}}).time_based);
  ApplyError("time_based", "yes");
  ApplyError("time_based", "true");
  ApplyError("time_based", "2");
}

TEST(ApplyJobOption, Times) {
  EXPECT_EQ(Applied({{"runtime", "30"}}).runtime, seconds(30));  // bare = seconds, as fio
  EXPECT_EQ(Applied({{"runtime", "500ms"}}).runtime, milliseconds(500));
  EXPECT_EQ(Applied({{"timeout", "2m"}}).runtime, minutes(2));
  EXPECT_EQ(Applied({{"ramp_time", "5"}}).ramp_time, seconds(5));
  EXPECT_EQ(Applied({{"ramp_time", "1500ms"}}).ramp_time, milliseconds(1500));
  for (const std::string_view name : {"runtime", "timeout", "ramp_time"}) {
    ApplyError(name, "5x");
    ApplyError(name, "1min");
    ApplyError(name, "-1");
    ApplyError(name, "1.5s");
    ApplyError(name, "");
    ApplyError(name, "99999999999d");
  }
}

TEST(ApplyJobOption, Rwmix) {
  EXPECT_EQ(Applied({{"rwmixread", "70"}}).rwmixread, 70u);
  EXPECT_EQ(Applied({{"rwmixread", "0"}}).rwmixread, 0u);
  EXPECT_EQ(Applied({{"rwmixread", "100"}}).rwmixread, 100u);
  EXPECT_EQ(Applied({{"rwmixwrite", "30"}}).rwmixread, 70u);
  EXPECT_EQ(Applied({{"rwmixwrite", "100"}}).rwmixread, 0u);
  EXPECT_EQ(Applied({{"rwmixread", "10"}, {"rwmixwrite", "25"}}).rwmixread, 75u);  // later wins
  for (const std::string_view name : {"rwmixread", "rwmixwrite"}) {
    ApplyError(name, "101");
    ApplyError(name, "-1");
    ApplyError(name, "50%");
    ApplyError(name, "");
  }
}

TEST(ApplyJobOption, RateIops) {
  const JobSpec both = Applied({{"rate_iops", "100"}});  // fio 3.33: 100 reads and 100 writes
  EXPECT_EQ(both.rate_iops_read, 100u);
  EXPECT_EQ(both.rate_iops_write, 100u);
  const JobSpec split = Applied({{"rate_iops", "100,50"}});
  EXPECT_EQ(split.rate_iops_read, 100u);
  EXPECT_EQ(split.rate_iops_write, 50u);
  const JobSpec reads = Applied({{"rate_iops", "100,"}});
  EXPECT_EQ(reads.rate_iops_read, 100u);
  EXPECT_EQ(reads.rate_iops_write, 0u);
  const JobSpec writes = Applied({{"rate_iops", ",50"}});
  EXPECT_EQ(writes.rate_iops_read, 0u);
  EXPECT_EQ(writes.rate_iops_write, 50u);
  // An empty part leaves that direction as it was.
  const JobSpec later = Applied({{"rate_iops", "5,6"}, {"rate_iops", "7,"}});
  EXPECT_EQ(later.rate_iops_read, 7u);
  EXPECT_EQ(later.rate_iops_write, 6u);
  ApplyError("rate_iops", ",");
  ApplyError("rate_iops", "1,2,3");
  ApplyError("rate_iops", "abc");
  ApplyError("rate_iops", "1k");
  ApplyError("rate_iops", "-5");
  ApplyError("rate_iops", "");
}

TEST(ApplyJobOption, Counts) {
  EXPECT_EQ(Applied({{"randseed", "0"}}).randseed, 0u);
  EXPECT_EQ(Applied({{"randseed", "18446744073709551615"}}).randseed, UINT64_MAX);
  EXPECT_EQ(Applied({{"number_ios", "1000"}}).number_ios, 1000u);
  EXPECT_EQ(Applied({{"fsync", "32"}}).fsync, 32u);
  EXPECT_EQ(Applied({{"fsync", "4294967295"}}).fsync, UINT32_MAX);
  ApplyError("randseed", "18446744073709551616");
  ApplyError("randseed", "0x89");
  ApplyError("randseed", "-1");
  ApplyError("number_ios", "1e6");
  ApplyError("number_ios", "");
  ApplyError("fsync", "4294967296");
  ApplyError("fsync", "x");
}

TEST(ApplyJobOption, UnknownOptionSuggestsTheNearestName) {
  JobSpec spec;
  const auto error = [&](std::string_view name) {
    const auto ok = ApplyJobOption(spec, name, "1");
    EXPECT_FALSE(ok.has_value()) << name;
    EXPECT_EQ(ok.error().code, ErrorCode::kInvalidArgument);
    return ok.has_value() ? "" : ok.error().message;
  };
  EXPECT_EQ(error("blocksz"), R"(unknown option "blocksz"; did you mean "blocksize"?)");
  EXPECT_EQ(error("iodepht"), R"(unknown option "iodepht"; did you mean "iodepth"?)");
  EXPECT_EQ(error("time-based"), R"(unknown option "time-based"; did you mean "time_based"?)");
  EXPECT_EQ(error("BS"), R"(unknown option "BS")");  // two edits from "bs": no better than guessing
  EXPECT_EQ(error("Bs"), R"(unknown option "Bs"; did you mean "bs"?)");  // case-sensitive
  EXPECT_EQ(error("norandommap"), R"(unknown option "norandommap")");
  EXPECT_EQ(error("io"), R"(unknown option "io")");
  EXPECT_EQ(error(""), R"(unknown option "")");
  EXPECT_EQ(spec, JobSpec());  // nothing was changed
}

TEST(JobOptionNames, ListsEveryNameAndAliasOnce) {
  const auto names = JobOptionNames();
  const std::set<std::string_view> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  EXPECT_GE(names.size(), 35u);  // 28 options and 7 aliases when the io_uring options came
  // Every listed name is one ApplyJobOption knows (its error, if any, is about the value).
  for (const std::string_view name : names) {
    JobSpec spec;
    const auto ok = ApplyJobOption(spec, name, "1");
    if (!ok) {
      EXPECT_TRUE(ok.error().message.starts_with(std::string(name) + ": ")) << name;
    }
  }
}

TEST(JobSpec, TargetPathAndIoAmount) {
  JobSpec spec;
  spec.filename = "/dev/sdb";
  EXPECT_EQ(spec.TargetPath(), "/dev/sdb");
  spec.filename.clear();
  spec.directory = "/var/lib/iowatch";
  spec.name = "seqread";
  EXPECT_EQ(spec.TargetPath(), "/var/lib/iowatch/seqread.0.0");  // fio's <name>.0.0
  spec.directory = "/var/lib/iowatch/";
  EXPECT_EQ(spec.TargetPath(), "/var/lib/iowatch/seqread.0.0");
  spec.size = 1000;
  EXPECT_EQ(spec.IoAmount(), 1000u);
  spec.io_size = 300;
  EXPECT_EQ(spec.IoAmount(), 300u);
}

TEST(ValidateJobSpec, Target) {
  EXPECT_TRUE(ValidateJobSpec(ValidSpec()).has_value());
  EXPECT_EQ(ValidationError(JobSpec()), "filename or directory is required");
  JobSpec both = ValidSpec();
  both.directory = "/tmp";
  both.size = 1 << 20;
  EXPECT_NE(ValidationError(both).find("filename or directory is required"), std::string::npos);
  JobSpec dir;
  dir.directory = "/tmp";
  EXPECT_TRUE(ValidationError(dir).starts_with("size: required with directory"));
  dir.size = 1 << 20;
  EXPECT_TRUE(ValidateJobSpec(dir).has_value());
  JobSpec nameless = ValidSpec();
  nameless.name = "";
  EXPECT_TRUE(ValidationError(nameless).starts_with("name: "));
  nameless.name = "a/b";
  EXPECT_TRUE(ValidationError(nameless).starts_with("name: "));
}

TEST(ValidateJobSpec, BlockSizeAndSize) {
  JobSpec spec = ValidSpec();
  spec.block_size = 0;
  EXPECT_TRUE(ValidationError(spec).starts_with("bs: "));
  spec.block_size = (64 << 20) + 1;
  EXPECT_TRUE(ValidationError(spec).starts_with("bs: "));
  spec.block_size = 64 << 20;
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  // O_DIRECT needs logical-block alignment: catches "4KiB" meant as 4096.
  spec.block_size = 4000;
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  spec.direct = true;
  EXPECT_NE(ValidationError(spec).find("4KiB"), std::string::npos);
  spec.block_size = 512;
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  // fio: "size too small, must not be less than minimum block size".
  spec.block_size = 4096;
  spec.size = 2048;
  EXPECT_TRUE(ValidationError(spec).starts_with("size: "));
  // Not multiples of bs: fio rounds, so do we (in the runner).
  spec.size = 6144;
  spec.offset = 1000;
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  spec.size = 0;  // the file's or device's own size
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
}

TEST(ValidateJobSpec, DepthMixAndTime) {
  JobSpec spec = ValidSpec();
  spec.iodepth = 0;
  EXPECT_TRUE(ValidationError(spec).starts_with("iodepth: "));
  spec.iodepth = 4097;
  EXPECT_TRUE(ValidationError(spec).starts_with("iodepth: "));
  spec.iodepth = 64;  // kept for psync too; the runner runs sync engines at depth 1, as fio
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  spec.rwmixread = 101;
  EXPECT_TRUE(ValidationError(spec).starts_with("rwmixread: "));
  spec.rwmixread = 100;
  spec.time_based = true;
  EXPECT_TRUE(ValidationError(spec).starts_with("time_based: "));
  spec.runtime = seconds(10);
  EXPECT_TRUE(ValidateJobSpec(spec).has_value());
  spec.runtime = nanoseconds(1500);  // fio counts in microseconds
  EXPECT_TRUE(ValidationError(spec).starts_with("runtime: "));
  spec.runtime = seconds(10);
  spec.ramp_time = seconds(-1);
  EXPECT_TRUE(ValidationError(spec).starts_with("ramp_time: "));
}

TEST(ParseJobOptions, AppliesInOrderThenValidates) {
  const std::vector<JobOption> options{{"filename", "/dev/sdb"}, {"bs", "4k"},
                                       {"rw", "randread"},       {"bs", "64k"},
                                       {"iodepth", "16"},        {"ioengine", "io_uring"}};
  const auto spec = ParseJobOptions(options);
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  EXPECT_EQ(spec->block_size, 65536u);
  EXPECT_EQ(spec->rw, RwMode::kRandRead);
  EXPECT_EQ(spec->iodepth, 16u);
  EXPECT_EQ(spec->engine, EngineKind::kIoUring);

  const std::vector<JobOption> bad{{"filename", "/dev/sdb"}, {"bs", "4q"}, {"rw", "nope"}};
  EXPECT_TRUE(ParseJobOptions(bad).error().message.starts_with("bs: "));  // the first error
  const std::vector<JobOption> incomplete{{"time_based", ""}, {"filename", "/dev/sdb"}};
  EXPECT_TRUE(ParseJobOptions(incomplete).error().message.starts_with("time_based: "));
}

TEST(ParseFioTime, EveryUnit) {
  EXPECT_EQ(Time("10us"), microseconds(10));
  EXPECT_EQ(Time("10usec"), microseconds(10));
  EXPECT_EQ(Time("10ms"), milliseconds(10));
  EXPECT_EQ(Time("10msec"), milliseconds(10));
  EXPECT_EQ(Time("10s"), seconds(10));
  EXPECT_EQ(Time("10m"), minutes(10));
  EXPECT_EQ(Time("10h"), hours(10));
  EXPECT_EQ(Time("2d"), hours(48));
  EXPECT_EQ(Time("0"), nanoseconds(0));
  EXPECT_EQ(Time("007s"), seconds(7));
  // fio lower-cases the unit: "1S" and "1000MS" both ran for one second.
  EXPECT_EQ(Time("1S"), seconds(1));
  EXPECT_EQ(Time("1000MS"), seconds(1));
}

TEST(ParseFioTime, BareNumberIsInTheGivenUnit) {
  EXPECT_EQ(Time("30"), seconds(30));
  EXPECT_EQ(Time("30", milliseconds(1)), milliseconds(30));
  EXPECT_EQ(Time("30", microseconds(1)), microseconds(30));
  EXPECT_EQ(Time("30s", milliseconds(1)), seconds(30));
  EXPECT_EQ(TimeError("30", nanoseconds(0)).code, ErrorCode::kParse);  // a unit is required
}

TEST(ParseFioTime, Errors) {
  for (const std::string_view junk :
       {"", "s", "5x", "-1", "+1", "1.5s", "1 s", " 1", "1s1", "1h30m", "0x10", "1ss", "1ns"}) {
    EXPECT_EQ(TimeError(junk).code, ErrorCode::kParse) << junk;
  }
  // fio 3.33 reads any unit but s, m, h, d, ms, us as microseconds: "1sec" ran for 1us.
  EXPECT_NE(TimeError("1sec").message.find(R"(write "s")"), std::string::npos);
  EXPECT_NE(TimeError("1min").message.find(R"(write "m")"), std::string::npos);
}

TEST(ParseFioTime, Overflow) {
  EXPECT_EQ(Time("9223372036s"), seconds(9223372036));  // 2^63-1 ns is 9223372036.85 s
  EXPECT_EQ(Time("9223372036854775807", nanoseconds(1)), nanoseconds(INT64_MAX));
  EXPECT_EQ(TimeError("9223372037s").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(TimeError("106752d").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(TimeError("99999999999999999999999").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(TimeError("9223372036854775808", nanoseconds(1)).code, ErrorCode::kInvalidArgument);
}

TEST(ToJobOptions, CanonicalFormOfASimpleJob) {
  const JobSpec spec = ValidSpec();
  const std::vector<JobOption> options = ToJobOptions(spec);
  std::vector<std::pair<std::string, std::string>> got;
  for (const JobOption& o : options) got.emplace_back(o.name, o.value);
  const std::vector<std::pair<std::string, std::string>> want{
      {"name", "iowatch"},   {"filename", "/dev/null"}, {"rw", "read"}, {"bs", "4k"},
      {"ioengine", "psync"}, {"iodepth", "1"},          {"direct", "0"}};
  EXPECT_EQ(got, want);
}

TEST(ToJobOptions, EveryOptionRendered) {
  JobSpec spec;
  spec.name = "mixed";
  spec.directory = "/mnt/a:b";
  spec.rw = RwMode::kRandReadWrite;
  spec.block_size = 4000;
  spec.size = 3u << 30;
  spec.offset = 1536;
  spec.iodepth = 32;
  spec.engine = EngineKind::kIoUring;
  spec.runtime = seconds(90);
  spec.time_based = true;
  spec.ramp_time = milliseconds(1500);
  spec.rwmixread = 70;
  spec.rate_iops_write = 50;
  spec.randrepeat = false;
  spec.randseed = 0;
  spec.io_size = 1u << 20;
  spec.number_ios = 1000;
  spec.fsync = 8;
  std::string text;
  for (const JobOption& o : ToJobOptions(spec)) text += fmt::format("{}={}\n", o.name, o.value);
  EXPECT_EQ(text,
            "name=mixed\ndirectory=/mnt/a\\:b\nrw=randrw\nbs=4000\nioengine=io_uring\niodepth=32\n"
            "direct=0\nsize=3g\noffset=1536\nio_size=1m\nnumber_ios=1000\nruntime=90s\n"
            "time_based=\nramp_time=1500ms\nrwmixread=70\nrate_iops=0,50\nrandrepeat=0\n"
            "randseed=0\nfsync=8\n");
}

class RoundTrip : public testing::TestWithParam<std::vector<JobOption>> {};

TEST_P(RoundTrip, ParseOfToJobOptionsIsTheSameSpec) {
  const auto spec = ParseJobOptions(GetParam());
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  const auto again = ParseJobOptions(ToJobOptions(*spec));
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(*again, *spec);
  EXPECT_EQ(JobFingerprint(*again), JobFingerprint(*spec));
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, RoundTrip,
    testing::Values(std::vector<JobOption>{{"filename", "/dev/sdb"}},
                    std::vector<JobOption>{{"name", "rand"},
                                           {"filename", R"(/dev/disk/by-path/pci-0000\:00\:1f.2)"},
                                           {"readwrite", "randrw"},
                                           {"blocksize", "4KiB"},
                                           {"size", "10GiB"},
                                           {"fileoffset", "1000"},
                                           {"iodepth", "4096"},
                                           {"ioengine", "null"},
                                           {"direct", "0"},
                                           {"timeout", "1d"},
                                           {"time_based", ""},
                                           {"ramp_time", "1500us"},
                                           {"rwmixwrite", "1"},
                                           {"rate_iops", "7,"},
                                           {"randrepeat", "0"},
                                           {"randseed", "18446744073709551615"},
                                           {"io_limit", "12345"},
                                           {"number_ios", "18446744073709551615"},
                                           {"fsync", "4294967295"},
                                           {"iodepth_batch_complete", "2"},
                                           {"iodepth_batch_complete_max", "4096"}},
                    std::vector<JobOption>{{"directory", "/var/lib/iowatch"},
                                           {"name", "seq"},
                                           {"rw", "write"},
                                           {"bs", "1m"},
                                           {"size", "1g"},
                                           {"direct", "1"},
                                           {"ioengine", "io_uring"},
                                           {"iodepth", "8"},
                                           {"runtime", "100ms"},
                                           {"rate_iops", ",3"}},
                    std::vector<JobOption>{{"filename", "/f"}, {"rw", "rw:-100k"}, {"bs", "50k"}},
                    std::vector<JobOption>{{"filename", R"(/tmp/x\y;z)"},
                                           {"rwmixread", "0"},
                                           {"randseed", "0"},
                                           {"runtime", "61"},
                                           {"ramp_time", "3600"},
                                           {"bs", "64m"}}));

TEST(JobFingerprint, IsStableAndCanonical) {
  const JobSpec a = Applied({{"filename", "/dev/sdb"}, {"bs", "4k"}, {"rw", "randread"}});
  const JobSpec b = Applied({{"rw", "randread"}, {"blocksize", "4096"}, {"filename", "/dev/sdb"}});
  EXPECT_EQ(JobFingerprint(a), JobFingerprint(b));
  EXPECT_EQ(JobFingerprint(a),
            "filename=/dev/sdb;rw=randread;bs=4k;ioengine=psync;iodepth=1;direct=0");
  JobSpec timed = a;
  timed.runtime = seconds(30);
  timed.time_based = true;
  EXPECT_EQ(JobFingerprint(timed), JobFingerprint(a) + ";runtime=30s;time_based=1");
}

TEST(JobFingerprint, ChangesWithWhatIsMeasuredNotWithTheName) {
  const JobSpec base = Applied({{"filename", "/dev/sdb"}});
  JobSpec renamed = base;
  renamed.name = "other";
  EXPECT_EQ(JobFingerprint(renamed), JobFingerprint(base));
  const auto differs = [&](auto change) {
    JobSpec changed = base;
    change(changed);
    EXPECT_NE(JobFingerprint(changed), JobFingerprint(base));
  };
  differs([](JobSpec& s) { s.block_size = 8192; });
  differs([](JobSpec& s) { s.filename = "/dev/sdc"; });
  differs([](JobSpec& s) { s.rw = RwMode::kWrite; });
  differs([](JobSpec& s) { s.iodepth = 2; });
  differs([](JobSpec& s) { s.direct = true; });
  differs([](JobSpec& s) { s.engine = EngineKind::kIoUring; });
  differs([](JobSpec& s) { s.runtime = seconds(1); });
  differs([](JobSpec& s) { s.rate_iops_read = 1; });
  differs([](JobSpec& s) { s.randseed = 1; });
  differs([](JobSpec& s) { s.fsync = 1; });
}

TEST(JobFingerprint, ValuesCannotForgeASeparator) {
  JobSpec forged = Applied({{"filename", "/dev/sdb;bs=8k"}});
  JobSpec honest = Applied({{"filename", "/dev/sdb"}, {"bs", "8k"}});
  EXPECT_NE(JobFingerprint(forged), JobFingerprint(honest));
  EXPECT_NE(JobFingerprint(forged).find(R"(/dev/sdb\;bs=8k)"), std::string::npos);
}

TEST(ApplyJobOption, IodepthBatchSubmitAndItsAlias) {
  JobSpec spec;
  EXPECT_EQ(spec.iodepth_batch_submit, 1u);  // fio's default
  ASSERT_TRUE(ApplyJobOption(spec, "iodepth_batch_submit", "16"));
  EXPECT_EQ(spec.iodepth_batch_submit, 16u);
  ASSERT_TRUE(ApplyJobOption(spec, "iodepth_batch", "0"));
  EXPECT_EQ(spec.iodepth_batch_submit, 0u);
  const auto bad = ApplyJobOption(spec, "iodepth_batch_submit", "many");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().message.starts_with("iodepth_batch_submit")) << bad.error().message;
  EXPECT_NE(bad.error().message.find("many"), std::string::npos);
}

TEST(ApplyJobOption, IodepthBatchCompleteMinMaxAndTheAlias) {
  JobSpec spec;
  EXPECT_EQ(spec.iodepth_batch_complete_min, 1u);  // fio's default
  EXPECT_EQ(spec.iodepth_batch_complete_max, 0u);  // unset: the min, as fio
  ASSERT_TRUE(ApplyJobOption(spec, "iodepth_batch_complete", "4"));
  EXPECT_EQ(spec.iodepth_batch_complete_min, 4u);
  ASSERT_TRUE(ApplyJobOption(spec, "iodepth_batch_complete_max", "16"));
  EXPECT_EQ(spec.iodepth_batch_complete_max, 16u);
  for (const char* option : {"iodepth_batch_complete_min", "iodepth_batch_complete_max"}) {
    const auto bad = ApplyJobOption(spec, option, "4097");
    ASSERT_FALSE(bad) << option;
    EXPECT_TRUE(bad.error().message.starts_with(option)) << bad.error().message;
    EXPECT_NE(bad.error().message.find("0 to 4096"), std::string::npos) << bad.error().message;
  }
  // Round trip through the canonical text, as the store keeps it.
  const auto text = [](const JobSpec& s) {
    std::string joined;
    for (const JobOption& o : ToJobOptions(s)) joined += fmt::format("{}={}\n", o.name, o.value);
    return joined;
  };
  EXPECT_NE(text(spec).find("iodepth_batch_complete_min=4\n"), std::string::npos) << text(spec);
  EXPECT_NE(text(spec).find("iodepth_batch_complete_max=16\n"), std::string::npos) << text(spec);
  EXPECT_EQ(text(JobSpec{}).find("iodepth_batch_complete"), std::string::npos);
}

}  // namespace
}  // namespace iowatch::probes
