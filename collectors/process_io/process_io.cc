#include "collectors/process_io/process_io.h"

#include <fmt/format.h>

#include <optional>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {

Result<ProcessIo> ParseProcessIo(std::string_view text, std::string_view path) {
  ProcessIo io;
  bool read = false, written = false;
  std::optional<Error> failure;
  ForEachLine(text, [&](std::string_view line, int number) {
    if (failure) return;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = line.substr(0, colon);
    uint64_t* field = key == "read_bytes"              ? &io.read_bytes
                      : key == "write_bytes"           ? &io.write_bytes
                      : key == "cancelled_write_bytes" ? &io.cancelled_write_bytes
                                                       : nullptr;
    if (field == nullptr) return;
    const auto fields = SplitFields(line.substr(colon + 1));
    const auto value = fields.size() == 1 ? ParseU64(fields[0]) : std::nullopt;
    if (!value) {
      failure = Error::Parse(fmt::format("expected '{}: <bytes>', found '{}'", key, line),
                             std::string(path), number);
      return;
    }
    *field = *value;
    read = read || field == &io.read_bytes;
    written = written || field == &io.write_bytes;
  });
  if (failure) return std::unexpected(*failure);
  if (!read || !written) {
    return MakeError(ErrorCode::kParse, "expected read_bytes and write_bytes lines",
                     std::string(path), 1);
  }
  return io;
}

std::optional<ProcessStat> ParseProcessStat(std::string_view stat_text) {
  const size_t end_of_name = stat_text.rfind(')');
  if (end_of_name == std::string_view::npos) return std::nullopt;
  // Fields from the 3rd (state) on.
  const auto fields = SplitFields(stat_text.substr(end_of_name + 1));
  constexpr size_t kParent = 4 - 3;
  constexpr size_t kStartTime = 22 - 3;
  if (fields.size() <= kStartTime) return std::nullopt;
  const auto ppid = ParseU64(fields[kParent]);
  const auto start = ParseU64(fields[kStartTime]);
  if (!ppid || *ppid > UINT32_MAX || !start) return std::nullopt;
  return ProcessStat{static_cast<uint32_t>(*ppid), *start};
}

ProcessIoReading ReadProcessIo(const FileTree& procfs) {
  ProcessIoReading reading;
  for (const std::string& entry : procfs.ListDirectories("").value_or(std::vector<std::string>())) {
    const auto pid = ParseU64(entry);
    if (!pid || *pid == 0 || *pid > UINT32_MAX) continue;
    auto io_text = procfs.Read(entry + "/io");
    if (!io_text) {
      if (io_text.error().code != ErrorCode::kNotFound) ++reading.unreadable;  // EACCES
      continue;
    }
    auto io = ParseProcessIo(*io_text, procfs.PathOf(entry + "/io").string());
    if (!io) continue;
    const std::string cgroup = UnitCgroupPathIn(procfs.Read(entry + "/cgroup").value_or(""));
    const auto stat = procfs.Read(entry + "/stat");
    reading.by_pid.emplace(
        static_cast<uint32_t>(*pid),
        ProcessIoReading::Process{cgroup, *io, stat ? ParseProcessStat(*stat) : std::nullopt});
  }
  return reading;
}

}  // namespace iowatch::collectors
