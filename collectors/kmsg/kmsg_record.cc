#include "collectors/kmsg/kmsg_record.h"

#include <algorithm>
#include <cctype>

#include "collectors/text/text_scan.h"
#include "common/block_status.h"

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

// A line read from its start, one piece of the kernel's format at a time:
// each step matches and moves on, or fails. Nothing but what the format has
// may come before, between or after the pieces, so text a user chose that
// only quotes the format (a mount option, a label) is no match.
class Scan {
 public:
  explicit Scan(std::string_view text) : rest_(text) {}
  bool Literal(std::string_view literal) {
    if (!rest_.starts_with(literal)) return false;
    rest_.remove_prefix(literal.size());
    return true;
  }
  // The text before `delimiter`, which is passed; nullopt without it.
  std::optional<std::string_view> Until(std::string_view delimiter) {
    return Take(rest_, delimiter);
  }
  // One or more characters `is` accepts.
  template <typename Is>
  std::optional<std::string_view> Run(Is is) {
    size_t n = 0;
    while (n < rest_.size() && is(static_cast<unsigned char>(rest_[n]))) ++n;
    if (n == 0) return std::nullopt;
    const std::string_view run = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return run;
  }
  bool Decimal() {
    return Run([](unsigned char c) { return std::isdigit(c) != 0; }).has_value();
  }
  bool Hex() {
    return Run([](unsigned char c) { return std::isxdigit(c) != 0; }).has_value();
  }
  bool End() const { return rest_.empty(); }
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

bool IsUpperName(unsigned char c) {
  return std::isupper(c) != 0 || std::isdigit(c) != 0 || c == '_';
}

// "sector 5866 op 0x0:(READ) flags 0x8800 phys_seg 1 prio class 2" after
// "sector "; 5.x kernels end after the flags or the segments. "read".
std::optional<std::string> OpOf(Scan& s) {
  if (!s.Decimal() || !s.Literal(" op 0x") || !s.Hex() || !s.Literal(":(")) return std::nullopt;
  const auto op = s.Run(IsUpperName);  // blk_op_str(): "READ", "WRITE_ZEROES", "UNKNOWN"
  if (!op || !s.Literal(")")) return std::nullopt;
  const bool tail =
      s.End() ||
      (s.Literal(" flags 0x") && s.Hex() &&
       (s.End() || (s.Literal(" phys_seg ") && s.Decimal() &&
                    (s.End() || (s.Literal(" prio class ") && s.Decimal() && s.End())))));
  if (!tail) return std::nullopt;
  return Lower(*op);
}

std::optional<BlockIoError> RequestError(std::string_view text) {
  Scan s(text);
  s.Literal("blk_update_request: ");  // 5.3 to 5.17 prefixed the caller
  const auto kind = s.Until(" error, dev ");
  if (!kind || !IsBlockStatusName(*kind)) return std::nullopt;
  const auto device = s.Until(", sector ");
  if (!device || !IsKernelDiskName(*device)) return std::nullopt;
  auto op = OpOf(s);
  if (!op) return std::nullopt;
  return BlockIoError{std::string(*device), std::move(*op), std::string(*kind), false};
}

// fs/buffer.c's buffer_io_error(): "Buffer I/O error on dev sdb1, logical
// block 0, async page read", "…, lost async page write", "…, lost sync page write".
std::optional<BlockIoError> BufferError(std::string_view text) {
  Scan s(text);
  if (!s.Literal("Buffer I/O error on dev ")) return std::nullopt;
  const auto device = s.Until(", logical block ");
  if (!device || !IsKernelDiskName(*device) || !s.Decimal()) return std::nullopt;
  constexpr std::pair<std::string_view, std::string_view> kWhats[] = {
      {", async page read", "read"},
      {", sync page read", "read"},
      {", lost async page write", "write"},
      {", lost sync page write", "write"}};
  for (const auto& [what, op] : kWhats) {
    if (s.rest() == what) {
      return BlockIoError{std::string(*device), std::string(op), "buffer", true};
    }
  }
  return std::nullopt;
}

// drivers/scsi/constants.c's snstext[], by sense key 0x0 to 0xf.
constexpr std::string_view kSenseKeyNames[] = {
    "No Sense",       "Recovered Error",    "Not Ready",      "Medium Error",
    "Hardware Error", "Illegal Request",    "Unit Attention", "Data Protect",
    "Blank Check",    "Vendor Specific(9)", "Copy Aborted",   "Aborted Command",
    "Equal",          "Volume Overflow",    "Miscompare",     "Completed"};

// XFS's reasons to shut down, 5.18 and later: "<why> (0x<flags>) detected at
// <function>+0x…/0x… (<file>:<line>).  Shutting down filesystem."
constexpr std::string_view kXfsShutdownWhys[] = {
    "Corruption of in-memory data", "Corruption of on-disk metadata", "Block device removal",
    "Log I/O Error", "Metadata I/O Error"};
// Before: the whole sentence, with one or two spaces before "Shutting".
constexpr std::string_view kXfsShutdownSentences[] = {
    "Corruption of in-memory data detected.", "Log I/O Error Detected.", "I/O Error Detected.",
    "All device paths lost."};

bool IsXfsShutdown(Scan s) {
  const auto symbol = [](unsigned char c) { return c != ' ' && c != '(' && c != '[' && c != ']'; };
  const auto file = [](unsigned char c) { return c != ' ' && c != ':' && c != ')'; };
  for (const std::string_view why : kXfsShutdownWhys) {
    Scan at = s;
    if (!at.Literal(why) || !at.Literal(" (0x") || !at.Hex() || !at.Literal(") detected at ") ||
        !at.Run(symbol)) {
      continue;
    }
    // %pS of a module's function: "xfs_trans_cancel+0x1f/0x4a0 [xfs]".
    if (at.Literal(" [") && (!at.Run(symbol) || !at.Literal("]"))) continue;
    if (at.Literal(" (") && at.Run(file) && at.Literal(":") && at.Decimal() &&
        at.Literal(").  Shutting down filesystem.") && at.End()) {
      return true;
    }
  }
  for (const std::string_view sentence : kXfsShutdownSentences) {
    Scan at = s;
    if (!at.Literal(sentence)) continue;
    if (!at.Literal(" ")) continue;
    at.Literal(" ");
    if (at.Literal("Shutting down filesystem") && at.End()) return true;
  }
  return false;
}

}  // namespace

bool IsKernelDiskName(std::string_view name) {
  // DISK_NAME_LEN is 32 with its NUL; "cciss/c0d0", "pmem0.1", "dm-3".
  if (name.empty() || name.size() > 31 || std::isalnum(static_cast<unsigned char>(name[0])) == 0) {
    return false;
  }
  return std::ranges::all_of(name, [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

bool KernelDiskExists(const FileTree& sysfs, std::string_view name) {
  if (!IsKernelDiskName(name)) return false;
  std::string entry(name);
  std::ranges::replace(entry, '/', '!');  // sysfs's name of "cciss/c0d0"
  // class/block lists partitions too; block/ (whole disks) is the older place.
  return sysfs.Exists("class/block/" + entry) || sysfs.Exists("block/" + entry);
}

bool IsScsiSenseKeyName(std::string_view key) {
  if (std::ranges::find(kSenseKeyNames, key) != std::end(kSenseKeyNames)) return true;
  // Without CONFIG_SCSI_CONSTANTS the kernel prints the number: "0x3".
  return key.size() == 3 && key.starts_with("0x") &&
         std::string_view("0123456789abcdef").find(key[2]) != std::string_view::npos;
}

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
  Scan s(text);
  // xfs_alert() and ext4_msg() prefix "<fs> (<device>): ".
  const bool xfs = s.Literal("XFS (");
  if (!xfs && !s.Literal("EXT4-fs (")) return std::nullopt;
  const auto device = s.Until("): ");
  if (!device || !IsKernelDiskName(*device)) return std::nullopt;
  if (xfs) {
    if (!IsXfsShutdown(s)) return std::nullopt;
    return FilesystemShutdown{"xfs", std::string(*device)};
  }
  // ext4_shutdown(): "shut down requested (<flags>)".
  if (!s.Literal("shut down requested (") || !s.Decimal() || !s.Literal(")") || !s.End()) {
    return std::nullopt;
  }
  return FilesystemShutdown{"ext4", std::string(*device)};
}

std::optional<ScsiSense> ParseScsiSense(std::string_view text) {
  Scan s(text);
  // dev_printk()'s "<driver> <host>:<channel>:<target>:<lun>: ", then
  // scsi_logging.c's "[<disk>] tag#<n> ".
  const auto driver = s.Run(
      [](unsigned char c) { return std::islower(c) != 0 || std::isdigit(c) != 0 || c == '_'; });
  if (!driver || !s.Literal(" ")) return std::nullopt;
  for (int part = 0; part < 4; ++part) {
    if ((part > 0 && !s.Literal(":")) || !s.Decimal()) return std::nullopt;
  }
  if (!s.Literal(": [")) return std::nullopt;
  const auto device = s.Until("] ");
  if (!device || !IsKernelDiskName(*device)) return std::nullopt;
  if (s.Literal("tag#") && (!s.Decimal() || !s.Literal(" "))) return std::nullopt;
  s.Literal(" ");  // before 3.19: "[sdb]  Sense Key"
  if (!s.Literal("Sense Key : ")) return std::nullopt;
  const auto key = s.Until(" [");
  if (!key || !IsScsiSenseKeyName(*key)) return std::nullopt;
  if (!s.Literal("current]") && !s.Literal("deferred]")) return std::nullopt;
  s.Literal(" ");
  if (s.Literal("[descriptor]")) s.Literal(" ");
  if (!s.End()) return std::nullopt;
  return ScsiSense{std::string(*device), std::string(*key)};
}

}  // namespace iowatch::collectors
