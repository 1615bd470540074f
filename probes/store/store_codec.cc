#include "probes/store/store_codec.h"

namespace iowatch::probes {
std::string JobOptionsText(const JobSpec& spec) {
  std::string out;
  for (const JobOption& option : ToJobOptions(spec)) {
    if (!out.empty()) out += ';';
    out += option.name;
    out += '=';
    for (char c : option.value) {
      if (c == ';' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

Result<JobSpec> ParseJobOptionsText(std::string_view text) {
  std::vector<JobOption> options;
  JobOption current;
  bool in_value = false;
  const auto finish = [&]() -> Status {
    if (!in_value) {
      return MakeError(ErrorCode::kParse,
                       fmt::format("job options: expected name=value, found \"{}\"", current.name));
    }
    options.push_back(std::move(current));
    current = JobOption{};
    in_value = false;
    return {};
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_value) {
      if (c == '=') {
        in_value = true;
      } else if (c == ';') {
        if (Status done = finish(); !done) return ErrorOf(done);
      } else {
        current.name += c;
      }
    } else if (c == '\\' && i + 1 < text.size()) {
      current.value += text[++i];
    } else if (c == ';') {
      if (Status done = finish(); !done) return ErrorOf(done);
    } else {
      current.value += c;
    }
  }
  if (!text.empty()) {
    if (Status done = finish(); !done) return ErrorOf(done);
  }
  return ParseJobOptions(options);
}

}  // namespace iowatch::probes
