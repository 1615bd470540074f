// The option table walked whole: every option, present and future, must
// parse its example, print it back to the same spec, change the fingerprint
// (a missed printer would merge the baselines of different jobs), agree with
// JobSpec's defaults and appear in the help. Then fio's io_uring options:
// flag syntax, the checks of ValidateJobSpec, their canonical text.
#include "probes/spec/job_option_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "probes/spec/job_option_values.h"

namespace iowatch::probes {
namespace {

using internal::FindJobOption;
using internal::JobOptionDef;
using internal::JobOptionTable;

// The options `def` is tested with besides itself: a target, and what it
// cannot go without (needs; time_based a runtime; directory a size).
std::vector<JobOption> Companions(const JobOptionDef& def) {
  std::vector<JobOption> options;
  if (def.name == "directory") {
    options.push_back({"size", "1m"});
  } else {
    options.push_back({"filename", "/dev/null"});
  }
  if (def.name == "time_based") options.push_back({"runtime", "1s"});
  std::string_view needs = def.needs;
  while (!needs.empty()) {
    const std::string_view pair = needs.substr(0, needs.find(' '));
    needs.remove_prefix(std::min(needs.size(), pair.size() + 1));
    const size_t eq = pair.find('=');
    options.push_back({std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1))});
  }
  return options;
}

// Applies `options` without validating (a directory job's base has no target).
JobSpec Unvalidated(const std::vector<JobOption>& options) {
  JobSpec spec;
  for (const JobOption& option : options) {
    const auto ok = ApplyJobOption(spec, option.name, option.value);
    EXPECT_TRUE(ok) << option.name << ": " << ok.error().message;
  }
  return spec;
}

TEST(JobOptionTable, EveryOptionRoundTripsAndChangesTheFingerprint) {
  for (const JobOptionDef& def : JobOptionTable()) {
    SCOPED_TRACE(def.name);
    const std::vector<JobOption> base = Companions(def);
    std::vector<JobOption> options = base;
    options.push_back({std::string(def.name), std::string(def.example)});
    const auto spec = ParseJobOptions(options);
    ASSERT_TRUE(spec) << spec.error().message;
    const JobSpec without = Unvalidated(base);
    EXPECT_NE(*spec, without) << "the example changes nothing";
    // (a) printed and parsed back, the same spec.
    const auto again = ParseJobOptions(ToJobOptions(*spec));
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(*again, *spec);
    // (b) a different job to the store; the name alone is not (it is the job's label).
    if (def.name == "name") {
      EXPECT_EQ(JobFingerprint(*spec), JobFingerprint(without));
    } else {
      EXPECT_NE(JobFingerprint(*spec), JobFingerprint(without));
    }
    // The alias is the same option.
    if (!def.alias.empty()) {
      options.back().name = def.alias;
      const auto aliased = ParseJobOptions(options);
      ASSERT_TRUE(aliased) << aliased.error().message;
      EXPECT_EQ(*aliased, *spec);
    }
  }
}

TEST(JobOptionTable, DefaultsAreJobSpecsAndLeaveTheTextAsItWas) {
  const JobSpec defaults;
  for (const JobOptionDef& def : JobOptionTable()) {
    SCOPED_TRACE(def.name);
    ASSERT_NE(def.parse, nullptr);
    EXPECT_FALSE(def.help.empty());
    EXPECT_NE(def.example, def.default_text);
    if (def.print == nullptr) continue;  // carried by another option (rwmixwrite)
    const auto printed = def.print(defaults);
    if (def.default_text.empty()) {
      EXPECT_FALSE(printed.has_value()) << *printed;
    } else {
      EXPECT_EQ(printed.value_or("<unset>"), def.default_text);
      // Parsing the default changes nothing.
      JobSpec spec;
      ASSERT_TRUE(ApplyJobOption(spec, def.name, def.default_text));
      EXPECT_EQ(spec, defaults);
    }
  }
  // Only the options every canonical text has carried are written at their default.
  std::vector<std::string> always;
  for (const JobOption& option : ToJobOptions(defaults)) always.push_back(option.name);
  EXPECT_EQ(always,
            (std::vector<std::string>{"name", "rw", "bs", "ioengine", "iodepth", "direct"}));
}

TEST(JobOptionTable, NamesAndAliasesAreUniqueAndFound) {
  std::set<std::string_view> seen;
  for (const JobOptionDef& def : JobOptionTable()) {
    EXPECT_TRUE(seen.insert(def.name).second) << def.name;
    EXPECT_EQ(FindJobOption(def.name), &def);
    if (def.alias.empty()) continue;
    EXPECT_TRUE(seen.insert(def.alias).second) << def.alias;
    EXPECT_EQ(FindJobOption(def.alias), &def);
  }
  EXPECT_EQ(std::set<std::string_view>(JobOptionNames().begin(), JobOptionNames().end()), seen);
  EXPECT_EQ(FindJobOption(""), nullptr);
  EXPECT_EQ(FindJobOption("norandommap"), nullptr);
}

// Every row whose `needs` names an engine is refused with each other engine,
// in the words users see, and taken with its own: a new row is covered as
// soon as it says what it needs.
TEST(JobOptionTable, AnEngineOnlyOptionIsRefusedWithEveryOtherEngine) {
  size_t engine_only = 0;
  for (const JobOptionDef& def : JobOptionTable()) {
    const std::optional<EngineKind> required = internal::RequiredEngine(def);
    if (!required) continue;
    ++engine_only;
    for (const auto& engine : internal::kEngines) {
      SCOPED_TRACE(fmt::format("{} with ioengine={}", def.name, engine.name));
      std::vector<JobOption> options = Companions(def);
      options.push_back({std::string(def.name), std::string(def.example)});
      options.push_back({"ioengine", std::string(engine.name)});  // after the needs: the last wins
      const auto spec = ParseJobOptions(options);
      if (engine.value == *required) {
        EXPECT_TRUE(spec) << spec.error().message;
      } else {
        ASSERT_FALSE(spec);
        EXPECT_EQ(spec.error().message,
                  fmt::format("{}: an option of ioengine={}, not of ioengine={}", def.name,
                              ToString(*required), engine.name));
      }
    }
  }
  EXPECT_GE(engine_only, 4u) << "fixedbufs, registerfiles, sqthread_poll, hipri";
}

// `needs` is "option=value" pairs of the table's options; an ioengine among
// them names an engine (else the check above would skip the row silently).
TEST(JobOptionTable, NeedsNameOptionsAndEngines) {
  for (const JobOptionDef& def : JobOptionTable()) {
    SCOPED_TRACE(def.name);
    const std::vector<JobOption> companions = Companions(def);
    for (const JobOption& need : companions) {
      if (need.name == "filename" || need.name == "size" || need.name == "runtime") continue;
      EXPECT_NE(FindJobOption(need.name), nullptr) << need.name;
      if (need.name == "ioengine") {
        EXPECT_TRUE(internal::RequiredEngine(def)) << need.value;
      }
    }
  }
  EXPECT_EQ(internal::RequiredEngine(*FindJobOption("hipri")), EngineKind::kIoUring);
  EXPECT_EQ(internal::RequiredEngine(*FindJobOption("bs")), std::nullopt);
}

TEST(JobOptionTable, HelpListsEveryOptionWithAliasAndDefault) {
  const std::string help = JobOptionsHelp();
  for (const JobOptionDef& def : JobOptionTable()) {
    const size_t at = help.find("  --" + std::string(def.name) +
                                (def.type == internal::OptionType::kFlag ? "[" : "="));
    ASSERT_NE(at, std::string::npos) << def.name;
    const std::string line = help.substr(at, help.find('\n', at) - at);
    if (!def.alias.empty()) {
      EXPECT_NE(line.find("--" + std::string(def.alias)), std::string::npos);
    }
    if (!def.default_text.empty()) {
      EXPECT_NE(line.find("default " + std::string(def.default_text)), std::string::npos) << line;
    }
    EXPECT_NE(help.find(def.help, at), std::string::npos) << def.name;
  }
  EXPECT_NE(help.find("  --bs=SIZE[,SIZE[,SIZE]] (alias --blocksize), default 4k\n"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("  --hipri[=0|1], default 0\n"), std::string::npos) << help;
  EXPECT_NE(help.find("; needs ioengine=io_uring direct=1\n"), std::string::npos) << help;
}

// ---------------------------------------------------------------- io_uring

JobSpec Parsed(std::vector<JobOption> options) {
  options.insert(options.begin(), {{"filename", "/dev/null"}, {"ioengine", "io_uring"}});
  auto spec = ParseJobOptions(options);
  EXPECT_TRUE(spec) << spec.error().message;
  return spec.value_or(JobSpec{});
}

std::string Invalid(std::vector<JobOption> options) {
  options.insert(options.begin(), {"filename", "/dev/null"});
  auto spec = ParseJobOptions(options);
  EXPECT_FALSE(spec) << JobFingerprint(*spec);
  return spec ? "" : spec.error().message;
}

TEST(IoUringOptions, OffByDefaultAndFlagsAsInFio) {
  EXPECT_EQ(JobSpec().uring, IoUringOptions{});
  EXPECT_FALSE(IoUringOptions{}.fixedbufs || IoUringOptions{}.registerfiles ||
               IoUringOptions{}.sqthread_poll || IoUringOptions{}.hipri);
  const JobSpec bare = Parsed({{"fixedbufs", ""}, {"registerfiles", "1"}, {"sqthread_poll", ""}});
  EXPECT_TRUE(bare.uring.fixedbufs);
  EXPECT_TRUE(bare.uring.registerfiles);
  EXPECT_TRUE(bare.uring.sqthread_poll);
  EXPECT_FALSE(bare.uring.hipri);
  EXPECT_FALSE(Parsed({{"fixedbufs", ""}, {"fixedbufs", "0"}}).uring.fixedbufs);
  // sqthread_poll implies registerfiles in the engine, not in the spec: the
  // job stays as written, as fio's "job options" do.
  EXPECT_FALSE(Parsed({{"sqthread_poll", ""}}).uring.registerfiles);
  for (const char* name : {"fixedbufs", "registerfiles", "sqthread_poll", "hipri"}) {
    JobSpec spec;
    const auto bad = ApplyJobOption(spec, name, "yes");
    ASSERT_FALSE(bad) << name;
    EXPECT_EQ(bad.error().message,
              fmt::format("{}: expected no value, 0 or 1, found \"yes\"", name));
  }
}

TEST(IoUringOptions, OnlyIoUringTakesThem) {
  for (const char* name : {"fixedbufs", "registerfiles", "sqthread_poll", "hipri"}) {
    EXPECT_EQ(Invalid({{name, ""}, {"direct", "1"}}),
              fmt::format("{}: an option of ioengine=io_uring, not of ioengine=psync", name));
    EXPECT_EQ(Invalid({{"ioengine", "null"}, {name, "1"}, {"direct", "1"}}),
              fmt::format("{}: an option of ioengine=io_uring, not of ioengine=null", name));
  }
  // Order does not matter (a daemon job sets ioengine in its defaults), and 0 is no option.
  EXPECT_TRUE(
      Parsed({{"ioengine", "psync"}, {"fixedbufs", ""}, {"ioengine", "io_uring"}}).uring.fixedbufs);
  EXPECT_TRUE(ParseJobOptions(std::vector<JobOption>{{"filename", "/dev/null"}, {"hipri", "0"}}));
}

TEST(IoUringOptions, HipriNeedsDirectAndNoFsync) {
  EXPECT_TRUE(
      Invalid({{"ioengine", "io_uring"}, {"hipri", ""}}).starts_with("hipri: needs direct=1"));
  EXPECT_TRUE(Invalid({{"ioengine", "io_uring"}, {"direct", "1"}, {"hipri", ""}, {"fsync", "1"}})
                  .starts_with("hipri: a polled ring cannot fsync"));
  EXPECT_TRUE(Parsed({{"direct", "1"}, {"hipri", ""}}).uring.hipri);
}

TEST(IoUringOptions, WrittenBareAfterTheOthersAndOnlyWhenSet) {
  const JobSpec plain = Parsed({});
  EXPECT_EQ(JobFingerprint(plain),
            "filename=/dev/null;rw=read;bs=4k;ioengine=io_uring;iodepth=1;direct=0");
  const JobSpec all = Parsed({{"direct", "1"},
                              {"hipri", "1"},
                              {"sqthread_poll", "1"},
                              {"registerfiles", "1"},
                              {"fixedbufs", "1"},
                              {"fsync", "0"}});
  std::string text;
  for (const JobOption& o : ToJobOptions(all)) text += fmt::format("{}={}\n", o.name, o.value);
  EXPECT_EQ(text,
            "name=iowatch\nfilename=/dev/null\nrw=read\nbs=4k\nioengine=io_uring\niodepth=1\n"
            "direct=1\nfixedbufs=\nregisterfiles=\nsqthread_poll=\nhipri=\n");
  EXPECT_EQ(JobFingerprint(all),
            "filename=/dev/null;rw=read;bs=4k;ioengine=io_uring;iodepth=1;direct=1;fixedbufs=1;"
            "registerfiles=1;sqthread_poll=1;hipri=1");
}

// The fleet's peer key: the same workload named differently or probing
// another device is the same; another block size, or a file in a directory
// instead of a named target, is not. Pinned: a hash that changed between
// versions would split a fleet's peers during an upgrade.
TEST(WorkloadFingerprint, TheSameWorkloadWhereverItProbes) {
  const JobSpec plain = Parsed({});
  EXPECT_EQ(WorkloadFingerprint(plain), "933724d05ac79e2c");  // FNV-1a of
  // "target=filename;rw=read;bs=4k;ioengine=io_uring;iodepth=1;direct=0"
  JobSpec renamed = Parsed({{"filename", "/dev/nvme0n1"}});
  renamed.name = "other-name";
  EXPECT_EQ(WorkloadFingerprint(renamed), WorkloadFingerprint(plain));
  EXPECT_NE(JobFingerprint(renamed), JobFingerprint(plain));
  EXPECT_NE(WorkloadFingerprint(Parsed({{"bs", "8k"}})), WorkloadFingerprint(plain));
  JobSpec in_directory = plain;
  in_directory.filename.clear();
  in_directory.directory = "/var/lib/iowatch";
  EXPECT_NE(WorkloadFingerprint(in_directory), WorkloadFingerprint(plain));
}

// An exported baseline or a stored run has only the JobFingerprint text: its
// workload is the same hash, and a path that looks like options (escaped in
// the text) is still only a path.
TEST(WorkloadFingerprint, OfAJobFingerprintText) {
  const JobSpec plain = Parsed({});
  EXPECT_EQ(WorkloadFingerprintOf(JobFingerprint(plain)), "933724d05ac79e2c");
  const JobSpec tricky = Parsed({{"filename", "/srv/a;directory=b\\;bs=8k"}});
  EXPECT_EQ(WorkloadFingerprintOf(JobFingerprint(tricky)), WorkloadFingerprint(plain));
  JobSpec in_directory = plain;
  in_directory.filename.clear();
  in_directory.directory = "/var/lib/iowatch";
  EXPECT_EQ(WorkloadFingerprintOf(JobFingerprint(in_directory)), WorkloadFingerprint(in_directory));
  const JobSpec other = Parsed({{"bs", "8k"}, {"iodepth", "4"}});
  EXPECT_EQ(WorkloadFingerprintOf(JobFingerprint(other)), WorkloadFingerprint(other));
}

TEST(IoUringOptions, UnknownNearNamesAreSuggested) {
  JobSpec spec;
  EXPECT_EQ(ApplyJobOption(spec, "fixedbuf", "").error().message,
            R"(unknown option "fixedbuf"; did you mean "fixedbufs"?)");
  EXPECT_EQ(ApplyJobOption(spec, "sqthread-poll", "").error().message,
            R"(unknown option "sqthread-poll"; did you mean "sqthread_poll"?)");
}

// The engine and rw names in help and errors come from the tables the parser
// reads (job_option_values.h): each name listed parses, prints back as
// listed, and the listed ones are all there are.
std::vector<std::string> Split(std::string_view text, std::string_view separator) {
  std::vector<std::string> parts;
  for (size_t from = 0; from <= text.size();) {
    const size_t at = std::min(text.find(separator, from), text.size());
    parts.emplace_back(text.substr(from, at - from));
    from = at + separator.size();
  }
  return parts;
}

TEST(JobOptionTable, HelpAndErrorsListTheNamesTheParserTakes) {
  const std::vector<std::string> engines = Split(EngineChoices(), "|");
  EXPECT_EQ(engines, Split(internal::kEngineNames, ", "));
  EXPECT_EQ(engines.size(), internal::kEngines.size());
  for (const std::string& engine : engines) {
    auto spec =
        ParseJobOptions(std::vector<JobOption>{{"filename", "/dev/null"}, {"ioengine", engine}});
    ASSERT_TRUE(spec) << engine << ": " << spec.error().message;
    EXPECT_EQ(ToString(spec->engine), engine);
  }
  std::string_view rw = internal::kRwChoices;
  ASSERT_TRUE(rw.ends_with("[:N]"));
  rw.remove_suffix(4);
  std::set<RwMode> modes;
  for (const std::string& name : Split(rw, "|")) {
    auto spec = ParseJobOptions(std::vector<JobOption>{{"filename", "/dev/null"}, {"rw", name}});
    ASSERT_TRUE(spec) << name << ": " << spec.error().message;
    EXPECT_EQ(ToString(spec->rw), name) << "the help lists fio's canonical spelling";
    EXPECT_TRUE(modes.insert(spec->rw).second) << name << " listed twice";
  }
  EXPECT_EQ(Split(internal::kRwNames, ", ").size(), internal::kRwModes.size());  // aliases too
  const std::string error = Invalid({{"rw", "sideways"}});
  EXPECT_NE(error.find(internal::kRwNames), std::string::npos) << error;
}

// fio's minval/maxval live in the rows: every ranged option takes its
// bounds, refuses one past either with the row's words, and its help says
// the range.
TEST(JobOptionTable, EachRangeIsTheRowsAndItsHelpSaysIt) {
  const std::string help = JobOptionsHelp();
  size_t ranged = 0;
  for (const internal::JobOptionDef& def : internal::JobOptionTable()) {
    if (def.range.max == 0) continue;
    ++ranged;
    SCOPED_TRACE(def.name);
    for (const uint64_t ok : {def.range.min, def.range.max}) {
      JobSpec spec;
      EXPECT_TRUE(ApplyJobOption(spec, def.name, std::to_string(ok))) << ok;
    }
    std::vector<uint64_t> outside = {def.range.max + 1};
    if (def.range.min > 0) outside.push_back(def.range.min - 1);
    for (const uint64_t bad : outside) {
      JobSpec spec;
      const auto refused = ApplyJobOption(spec, def.name, std::to_string(bad));
      ASSERT_FALSE(refused) << bad;
      const std::string bounds = def.range.note_in_error
                                     ? internal::RangeText(def.range)
                                     : fmt::format("{} to {}", def.range.min, def.range.max);
      EXPECT_NE(refused.error().message.find(bounds), std::string::npos) << refused.error().message;
      if (!def.range.noun.empty()) {
        EXPECT_NE(refused.error().message.find(def.range.noun), std::string::npos);
      }
    }
    EXPECT_NE(help.find(fmt::format("  --{}=INT", def.name)), std::string::npos);
    EXPECT_NE(help.find("; " + internal::RangeText(def.range)), std::string::npos);
  }
  EXPECT_EQ(ranged, 7u);  // iodepth, its three batches, rwmixread/write, numjobs
}

}  // namespace
}  // namespace iowatch::probes
