// ToJobOptions, JobFingerprint, WorkloadFingerprint and JobOptionsHelp (declared in
// job_spec.h): a JobSpec written back as canonical fio options, and the
// options described, both from the option table.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "common/fnv1a.h"
#include "probes/spec/job_option_table.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {
namespace {

using internal::JobOptionDef;
using internal::JobOptionTable;
using internal::OptionType;

// The value's syntax on the help's first line; a choice's is its `accepted`.
constexpr EnumName<OptionType> kPlaceholders[] = {
    {OptionType::kString, "STR"},
    {OptionType::kPath, "PATH"},
    {OptionType::kChoice, ""},
    {OptionType::kSize, "SIZE"},
    {OptionType::kSizeList, "SIZE[,SIZE[,SIZE]]"},
    {OptionType::kInt, "INT"},
    {OptionType::kIntList, "INT[,INT]"},
    {OptionType::kBool, "0|1"},
    {OptionType::kFlag, ""},
    {OptionType::kTime, "TIME"},
};
static_assert(NamesEveryValue<kPlaceholders>());

std::string_view Placeholder(const JobOptionDef& def) {
  return def.type == OptionType::kChoice ? def.accepted
                                         : NameIn<OptionType>(kPlaceholders, def.type);
}

}  // namespace

std::vector<JobOption> ToJobOptions(const JobSpec& spec) {
  std::vector<JobOption> out;
  for (const JobOptionDef& def : JobOptionTable()) {
    if (def.print == nullptr || (!def.always_printed && !internal::SetsOption(def, spec))) continue;
    std::optional<std::string> value = def.print(spec);
    if (!value) continue;
    out.push_back(JobOption{std::string(def.name), std::move(*value)});
  }
  return out;
}

std::string JobOptionsHelp() {
  std::string out;
  for (const JobOptionDef& def : JobOptionTable()) {
    out += fmt::format(
        "  --{}{}", def.name,
        def.type == OptionType::kFlag ? "[=0|1]" : fmt::format("={}", Placeholder(def)));
    if (!def.alias.empty()) out += fmt::format(" (alias --{})", def.alias);
    if (!def.default_text.empty()) out += fmt::format(", default {}", def.default_text);
    out += fmt::format("\n      {}", def.help);
    if (!def.accepted.empty() && def.type != OptionType::kChoice) {
      out += fmt::format("; {}", def.accepted);
    } else if (def.range.max != 0) {
      out += fmt::format("; {}", RangeText(def.range));
    }
    if (!def.needs.empty()) out += fmt::format("; needs {}", def.needs);
    out += '\n';
  }
  return out;
}

namespace {

// "key=value;…" of `options`, escaped so that no value can forge a separator.
std::string OptionsText(const std::vector<JobOption>& options) {
  std::string out;
  for (const JobOption& option : options) {
    if (!out.empty()) out += ';';
    out += option.name;
    out += '=';
    for (char c : option.value.empty() ? std::string("1") : option.value) {
      if (c == ';' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string JobFingerprint(const JobSpec& spec) {
  std::vector<JobOption> options = ToJobOptions(spec);
  std::erase_if(options, [](const JobOption& o) { return o.name == "name"; });
  return OptionsText(options);
}

std::string WorkloadFingerprint(const JobSpec& spec) {
  return WorkloadFingerprintOf(JobFingerprint(spec));
}

std::string WorkloadFingerprintOf(std::string_view job_fingerprint) {
  // Walks OptionsText's items: a backslash escapes the next character, so only
  // an unescaped ';' ends an item, and no value can pass for a filename key.
  std::string workload;
  size_t item = 0;
  auto take_item = [&](size_t end) {
    const std::string_view text = job_fingerprint.substr(item, end - item);
    const std::string_view key = text.substr(0, text.find('='));
    if (!workload.empty()) workload += ';';
    workload +=
        key == "filename" || key == "directory" ? fmt::format("target={}", key) : std::string(text);
    item = end + 1;
  };
  for (size_t i = 0; i < job_fingerprint.size(); ++i) {
    if (job_fingerprint[i] == '\\') {
      ++i;
    } else if (job_fingerprint[i] == ';') {
      take_item(i);
    }
  }
  if (item < job_fingerprint.size()) take_item(job_fingerprint.size());
  return fmt::format("{:016x}", Fnv1a64(workload));
}

}  // namespace iowatch::probes
