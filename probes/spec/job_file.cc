#include "probes/spec/job_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "common/file_tree.h"
#include "common/host_units.h"

namespace iowatch::probes {
namespace {

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class LineError {
 public:
  LineError(const std::string& path, int line) : path_(path), line_(line) {}
  std::unexpected<Error> operator()(std::string message) const {
    return MakeError(ErrorCode::kParse, std::move(message), path_, line_);
  }

 private:
  const std::string& path_;
  int line_;
};

std::optional<std::string> BuiltinVariable(std::string_view name, const JobFileEnvironment& env) {
  if (name == "pagesize") return std::to_string(env.page_size);
  if (name == "ncpus") return std::to_string(env.cpus);
  if (name == "mb_memory") return std::to_string(env.memory_mib);
  return std::nullopt;
}

// fio's $var expansion, the trivial part of it.
Result<std::string> Expand(std::string_view value, const JobFileEnvironment& env,
                           const LineError& fail) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$') {
      out += value[i];
      continue;
    }
    const std::string_view rest = value.substr(i + 1);
    if (rest.starts_with('(')) {
      return fail(
          fmt::format("{:?}: fio's arithmetic expressions are not supported; write the "
                      "value",
                      value));
    }
    if (rest.starts_with('{')) {
      const size_t close = rest.find('}');
      if (close == std::string_view::npos) return fail(fmt::format("{:?}: no closing '}}'", value));
      const std::string name(rest.substr(1, close - 1));
      const std::optional<std::string> found = env.getenv ? env.getenv(name) : std::nullopt;
      if (!found) return fail(fmt::format("${{{}}}: not set in the environment", name));
      out += *found;
      i += close + 1;
      continue;
    }
    size_t length = 0;
    while (length < rest.size() && IsNameChar(rest[length])) ++length;
    const std::optional<std::string> builtin = BuiltinVariable(rest.substr(0, length), env);
    if (!builtin) {
      return fail(fmt::format("${}: expected $pagesize, $ncpus, $mb_memory or ${{NAME}}",
                              rest.substr(0, length)));
    }
    out += *builtin;
    i += length;
  }
  return out;
}

struct FileParser {
  const std::string& path;
  const JobFileEnvironment& environment;
  std::vector<LocatedOption> global;
  std::vector<JobOption> global_options;
  std::vector<JobDraft> drafts;
  bool in_global = false;
  bool in_section = false;

  Status Section(std::string_view header, int line, const LineError& fail) {
    const std::string_view name = Trim(header.substr(1, header.size() - 2));
    if (name.empty()) return fail("expected a section name between '[' and ']'");
    in_section = true;
    in_global = name == "global";
    if (!in_global) drafts.push_back({std::string(name), line, global, {}});
    return {};
  }

  Status Option(std::string_view text, int line, const LineError& fail) {
    if (!in_section) return fail(fmt::format("{:?}: an option before the first section", text));
    const size_t eq = text.find('=');
    const std::string name(Trim(text.substr(0, eq)));
    if (name == "include") return fail("include: not supported; write the options in this file");
    if (name.starts_with("include ")) {
      return fail("include: not supported; write the options in this file");
    }
    std::string value;
    if (eq != std::string_view::npos) {
      auto expanded = Expand(Trim(text.substr(eq + 1)), environment, fail);
      if (!expanded) return ErrorOf(expanded);
      value = std::move(*expanded);
    }
    LocatedOption located{{name, value}, line};
    if (in_global) {
      global.push_back(located);
      global_options.push_back(located.option);
    } else {
      drafts.back().own.push_back(std::move(located));
    }
    return {};
  }

  Status Line(std::string_view raw, int line) {
    const std::string_view text = Trim(raw);
    if (text.empty() || text.starts_with(';') || text.starts_with('#')) return {};
    const LineError fail(path, line);
    if (text.starts_with('[')) {
      if (!text.ends_with(']')) return fail(fmt::format("{:?}: expected [section]", text));
      return Section(text, line, fail);
    }
    return Option(text, line, fail);
  }
};

}  // namespace

JobFileEnvironment JobFileEnvironment::Host() {
  JobFileEnvironment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): at start-up
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const long pages = sysconf(_SC_PHYS_PAGES);
  env.page_size = PageBytes();
  env.cpus = cpus > 0 ? static_cast<uint32_t>(cpus) : 1;
  env.memory_mib = pages > 0 ? static_cast<uint64_t>(pages) * env.page_size >> 20 : 0;
  return env;
}

Result<JobSet> ParseJobFile(std::string_view text, const std::string& path,
                            const JobFileEnvironment& environment, JobCheck check) {
  FileParser parser{path, environment, {}, {}, {}, false, false};
  int line = 0;
  while (!text.empty()) {
    ++line;
    const size_t end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (auto ok = parser.Line(raw, line); !ok) return ErrorOf(ok);
  }
  if (parser.drafts.empty()) {
    return MakeError(ErrorCode::kParse, "no job: expected a section such as [random-read]", path);
  }
  return MakeJobSet(std::move(parser.global_options), parser.drafts, path, check);
}

Result<JobSet> ReadJobFile(const std::string& path, JobCheck check) {
  // A regular file of bounded size only: the daemon reads job files on its
  // event loop (at SIGHUP), where a FIFO would block it and /dev/zero fill it.
  auto text = ReadFile(path, {.open_error = "cannot open the job file",
                              .read_error = "cannot read the job file",
                              .max_bytes = kMaxJobFileBytes});
  if (!text) return ErrorOf(std::move(text));
  return ParseJobFile(*text, path, JobFileEnvironment::Host(), check);
}

}  // namespace iowatch::probes
