#include "collectors/vm/uptime.h"

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {

Result<uint64_t> ParseUptimeCentiseconds(std::string_view text, std::string_view path) {
  const auto fields = SplitFields(text.substr(0, text.find('\n')));
  if (fields.empty()) {
    return MakeError(ErrorCode::kParse, "expected '<seconds>.<centiseconds> <idle>', file is empty",
                     std::string(path), 1);
  }
  const std::string_view up = fields[0];
  const size_t dot = up.find('.');
  const auto seconds = ParseU64(up.substr(0, dot));
  // Like sysstat's "%lu.%lu": the digits after the dot are taken as centiseconds.
  const auto centis =
      dot == std::string_view::npos ? std::optional<uint64_t>(0) : ParseU64(up.substr(dot + 1));
  if (!seconds || !centis || *centis > 99) {
    return MakeError(ErrorCode::kParse,
                     fmt::format("expected '<seconds>.<centiseconds>', found '{}'", up),
                     std::string(path), 1);
  }
  return *seconds * 100 + *centis;
}

Result<uint64_t> ReadUptimeCentiseconds(const FileTree& procfs) {
  auto text = procfs.Read("uptime");
  if (!text) return ErrorOf(text);
  return ParseUptimeCentiseconds(*text, procfs.PathOf("uptime").string());
}

}  // namespace iowatch::collectors
