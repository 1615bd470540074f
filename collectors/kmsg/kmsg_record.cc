#include "collectors/kmsg/kmsg_record.h"

#include <algorithm>
#include <cctype>

#include "collectors/text_scan.h"

namespace iowatch::collectors {
namespace {

// The text up to `delimiter` in `rest`, which then starts after it.
std::optional<std::string_view> Take(std::string_view& rest, std::string_view delimiter) {
  const size_t at = rest.find(delimiter);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view taken = rest.substr(0, at);
  rest.remove_prefix(at + delimiter.size());
  return taken;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "sector 5866 op 0x0:(READ) flags …" -> "read"; nullopt without the op.
std::optional<std::string> OpOf(std::string_view rest) {
  if (!Take(rest, " op 0x")) return std::nullopt;
  if (!Take(rest, ":(")) return std::nullopt;
  const auto op = Take(rest, ")");
  if (!op || op->empty()) return std::nullopt;
  return Lower(*op);
}

std::optional<BlockIoError> RequestError(std::string_view text) {
  // Older kernels: "blk_update_request: I/O error, dev …".
  if (text.starts_with("blk_update_request: ")) text.remove_prefix(20);
  std::string_view rest = text;
  const auto kind = Take(rest, " error, dev ");
  if (!kind || kind->empty() || kind->find(',') != std::string_view::npos) return std::nullopt;
  const auto device = Take(rest, ", sector ");
  if (!device || device->empty() || device->find(' ') != std::string_view::npos) {
    return std::nullopt;
  }
  auto op = OpOf(rest);
  if (!op) return std::nullopt;
  return BlockIoError{std::string(*device), std::move(*op), std::string(*kind), false};
}

// "Buffer I/O error on dev sdb1, logical block 0, async page read"
// "Buffer I/O error on dev loop0, logical block 12, lost async page write"
std::optional<BlockIoError> BufferError(std::string_view text) {
  constexpr std::string_view kPrefix = "Buffer I/O error on dev ";
  if (!text.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = text.substr(kPrefix.size());
  const auto device = Take(rest, ", logical block ");
  if (!device || device->empty()) return std::nullopt;
  const std::string op = rest.ends_with(" write") ? "write" : rest.ends_with(" read") ? "read" : "";
  if (op.empty()) return std::nullopt;
  return BlockIoError{std::string(*device), op, "buffer", true};
}

}  // namespace

std::optional<KmsgRecord> ParseKmsgRecord(std::string_view bytes) {
  std::string_view rest = bytes;
  const auto header = Take(rest, ";");
  if (!header) return std::nullopt;
  std::string_view fields = *header;
  const auto priority = Take(fields, ",");
  const auto sequence = Take(fields, ",");
  if (!priority || !sequence) return std::nullopt;
  // USEC, then FLAGS and any further fields a newer kernel adds.
  const std::string_view usec = fields.substr(0, fields.find(','));
  const auto p = ParseU64(*priority);
  const auto s = ParseU64(*sequence);
  const auto u = ParseU64(usec);
  if (!p || !s || !u || *p > 0xffffffffULL) return std::nullopt;
  // The message ends at the first newline; " KEY=VALUE" lines follow it.
  const std::string_view text = rest.substr(0, rest.find('\n'));
  return KmsgRecord{static_cast<uint32_t>(*p), *s, *u, std::string(text)};
}

std::optional<BlockIoError> ParseBlockIoError(std::string_view text) {
  if (auto request = RequestError(text)) return request;
  return BufferError(text);
}

std::optional<SuppressedIoErrors> ParseSuppressedIoErrors(std::string_view text) {
  std::string_view rest = text;
  const auto function = Take(rest, ": ");
  if (!function) return std::nullopt;
  const bool buffer = *function == "buffer_io_error";
  if (!buffer && *function != "blk_print_req_error" && *function != "print_req_error") {
    return std::nullopt;
  }
  const auto number = Take(rest, " callbacks suppressed");
  if (!number || !rest.empty()) return std::nullopt;
  const auto count = ParseU64(*number);
  if (!count) return std::nullopt;
  return SuppressedIoErrors{buffer, *count};
}

std::optional<FilesystemShutdown> ParseFilesystemShutdown(std::string_view text) {
  // "<prefix><device>): <message>"
  const auto device_after = [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (!text.starts_with(prefix)) return std::nullopt;
    std::string_view rest = text.substr(prefix.size());
    const auto device = Take(rest, "): ");
    if (!device || device->empty() || device->find(' ') != std::string_view::npos) {
      return std::nullopt;
    }
    text = rest;
    return device;
  };
  if (const auto device = device_after("XFS (")) {
    if (text.find("Shutting down filesystem") == std::string_view::npos) return std::nullopt;
    return FilesystemShutdown{"xfs", std::string(*device)};
  }
  if (const auto device = device_after("EXT4-fs (")) {
    if (!text.starts_with("shut down requested")) return std::nullopt;
    return FilesystemShutdown{"ext4", std::string(*device)};
  }
  return std::nullopt;
}

std::optional<ScsiSense> ParseScsiSense(std::string_view text) {
  std::string_view rest = text;
  const auto address = Take(rest, ": [");  // "sd 2:0:0:0"
  if (!address || address->find(' ') == std::string_view::npos) return std::nullopt;
  const auto device = Take(rest, "] ");
  if (!device || device->empty() || device->find(' ') != std::string_view::npos) {
    return std::nullopt;
  }
  if (rest.starts_with("tag#")) {
    const size_t tag_end = rest.find(' ');
    if (tag_end == std::string_view::npos || !ParseU64(rest.substr(4, tag_end - 4))) {
      return std::nullopt;
    }
    rest.remove_prefix(tag_end + 1);
  }
  while (rest.starts_with(' ')) rest.remove_prefix(1);  // older kernels: "[sdb]  Sense Key"
  constexpr std::string_view kSenseKey = "Sense Key : ";
  if (!rest.starts_with(kSenseKey)) return std::nullopt;
  rest.remove_prefix(kSenseKey.size());
  const auto key = Take(rest, " [");
  if (!key || key->empty()) return std::nullopt;
  if (!rest.starts_with("current]") && !rest.starts_with("deferred]")) return std::nullopt;
  return ScsiSense{std::string(*device), std::string(*key)};
}

}  // namespace iowatch::collectors
