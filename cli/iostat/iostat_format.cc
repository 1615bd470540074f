#include "cli/iostat/iostat_format.h"

#include <fmt/format.h>

#include <cstdio>

#include "common/terminal_text.h"
#include "common/utf8.h"

namespace iowatch::daemon {
namespace {

using collectors::IostatRow;

// sysstat divides sector rates by this factor to print its unit.
double SectorDivisor(IostatUnit unit) {
  switch (unit) {
    case IostatUnit::kKilobytes:
      return 2;
    case IostatUnit::kMegabytes:
      return 2048;
    case IostatUnit::kSectors:
      return 1;
  }
  return 2;
}

uint64_t SectorDivisorInt(IostatUnit unit) { return static_cast<uint64_t>(SectorDivisor(unit)); }

// Labels as sysstat spells them: "kB_read/s" / "MB_read/s" / "Blk_read/s"
// in the basic table, "rkB/s" / "rMB/s" / "rsec/s" in the extended one.
const char* BasicUnit(IostatUnit unit) {
  return unit == IostatUnit::kMegabytes ? "MB" : unit == IostatUnit::kSectors ? "Blk" : "kB";
}
const char* ExtendedUnit(IostatUnit unit) {
  return unit == IostatUnit::kMegabytes ? "MB" : unit == IostatUnit::kSectors ? "sec" : "kB";
}

// Exactly printf's "%.2f" (C locale; glibc rounds the exact binary value, ties
// to even), which is what sysstat prints with.
std::string F2(double value) {
  char buffer[400];
  const int n = std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0);
}

// " %*.2f"
void AppendFixed(std::string& out, int width, double value) {
  fmt::format_to(std::back_inserter(out), " {:>{}}", F2(value), width);
}

struct Direction {
  char letter;
  double ios_per_s, sectors_per_s, merges_per_s, merge_pct, await_ms, request_sectors;
};

std::vector<Direction> Directions(const IostatRow& r) {
  return {{'r', r.reads_per_s, r.read_sectors_per_s, r.read_merges_per_s, r.read_merge_pct,
           r.read_await_ms, r.read_request_sectors},
          {'w', r.writes_per_s, r.write_sectors_per_s, r.write_merges_per_s, r.write_merge_pct,
           r.write_await_ms, r.write_request_sectors},
          {'d', r.discards_per_s, r.discard_sectors_per_s, r.discard_merges_per_s,
           r.discard_merge_pct, r.discard_await_ms, r.discard_request_sectors}};
}

// The device table's header line, as sysstat prints it for the layout.
void AppendDeviceHeader(std::string& out, const IostatLayout& layout) {
  const char* spc = layout.unit == IostatUnit::kSectors ? "" : " ";
  if (layout.extended) {
    const char* unit = ExtendedUnit(layout.unit);
    out += fmt::format("{:<13}", "Device");
    for (char d : {'r', 'w', 'd'}) {
      out += fmt::format("     {0}/s    {1}{0}{2}/s   {0}rqm/s  %{0}rqm {0}_await {0}areq-sz", d,
                         spc, unit);
    }
    out += "     f/s f_await  aqu-sz  %util\n";
  } else {
    const char* unit = BasicUnit(layout.unit);
    out += fmt::format(
        "{0:<13}      tps   {1}{2}_read/s   {1}{2}_wrtn/s   {1}{2}_dscd/s   {1}{2}_read   "
        "{1}{2}_wrtn   {1}{2}_dscd\n",
        "Device", spc, unit);
  }
}

// One device's line (without the name and the newline).
void AppendDeviceColumns(std::string& out, const IostatLayout& layout, const IostatRow& r) {
  const double div = SectorDivisor(layout.unit);
  if (layout.extended) {
    for (const Direction& d : Directions(r)) {
      AppendFixed(out, 7, d.ios_per_s);
      AppendFixed(out, 9, d.sectors_per_s / div);
      AppendFixed(out, 8, d.merges_per_s);
      AppendFixed(out, 6, d.merge_pct);
      AppendFixed(out, 7, d.await_ms);
      AppendFixed(out, 8, d.request_sectors / 2);
    }
    AppendFixed(out, 7, r.flushes_per_s);
    AppendFixed(out, 7, r.flush_await_ms);
    AppendFixed(out, 7, r.queue_size);
    AppendFixed(out, 6, r.util_pct);
  } else {
    const uint64_t idiv = SectorDivisorInt(layout.unit);
    AppendFixed(out, 8, r.transfers_per_s);
    AppendFixed(out, 12, r.read_sectors_per_s / div);
    AppendFixed(out, 12, r.write_sectors_per_s / div);
    AppendFixed(out, 12, r.discard_sectors_per_s / div);
    fmt::format_to(std::back_inserter(out), " {:10} {:10} {:10}", r.read_sectors / idiv,
                   r.write_sectors / idiv, r.discard_sectors / idiv);
  }
}

}  // namespace

std::string IostatTextFormatter::Banner(const HostInfo& host, const std::string& date) const {
  // uname's fields and the device names are the system's bytes: shown
  // escaped (sysstat prints them raw, escape sequences and all).
  return fmt::format("{} {} ({}) \t{} \t_{}_\t({} CPU)\n", TerminalText(host.sysname),
                     TerminalText(host.release), TerminalText(host.nodename), date,
                     TerminalText(host.machine), host.cpu_count);
}

std::string IostatTextFormatter::Report(const IostatReport& report) const {
  std::string out;
  if (report.timestamp) out += *report.timestamp + "\n";
  if (layout_.show_cpu) {
    const auto& c = report.cpu;
    out += "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n       ";
    for (double v : {c.user, c.nice, c.system, c.iowait, c.steal, c.idle}) AppendFixed(out, 7, v);
    out += "\n\n";
  }
  if (layout_.show_devices) {
    AppendDeviceHeader(out, layout_);
    for (size_t i = 0; i < report.devices.size(); ++i) {
      out += fmt::format("{:<13}", TerminalText(report.display_names[i]));
      AppendDeviceColumns(out, layout_, report.devices[i].row);
      out += "\n";
    }
    out += "\n";
  } else {
    out += "\n";  // sysstat ends a CPU-only report with one more empty line
  }
  out += "\n";
  return out;
}

std::string IostatJsonFormatter::Begin(const HostInfo& host, const std::string& date) const {
  return fmt::format(
      "{{\"sysstat\": {{\n\t\"hosts\": [\n\t\t{{\n\t\t\t\"nodename\": {},\n\t\t\t\"sysname\": "
      "{},\n\t\t\t\"release\": {},\n\t\t\t\"machine\": {},\n\t\t\t\"number-of-cpus\": "
      "{},\n\t\t\t\"date\": \"{}\",\n\t\t\t\"statistics\": [\n",
      JsonString(host.nodename), JsonString(host.sysname), JsonString(host.release),
      JsonString(host.machine), host.cpu_count, date);
}

std::string IostatJsonFormatter::Report(const IostatReport& report) {
  std::string out;
  if (!first_report_) out += ",\n";
  first_report_ = false;
  out += "\t\t\t\t{\n";
  if (report.timestamp) out += fmt::format("\t\t\t\t\t\"timestamp\": \"{}\",\n", *report.timestamp);
  if (layout_.show_cpu) {
    const auto& c = report.cpu;
    out += fmt::format(
        "\t\t\t\t\t\"avg-cpu\":  {{\"user\": {}, \"nice\": {}, \"system\": {}, "
        "\"iowait\": {}, \"steal\": {}, \"idle\": {}}}",
        F2(c.user), F2(c.nice), F2(c.system), F2(c.iowait), F2(c.steal), F2(c.idle));
    out += layout_.show_devices ? ",\n" : "\n";
  }
  if (layout_.show_devices) {
    const double div = SectorDivisor(layout_.unit);
    out += "\t\t\t\t\t\"disk\": [\n";
    for (size_t i = 0; i < report.devices.size(); ++i) {
      const IostatRow& r = report.devices[i].row;
      if (i > 0) out += ",\n";
      // sysstat 12.6 prints the name raw (a quote in it breaks the document);
      // escaped here, a deliberate difference (docs/commands.md, "Deliberate
      // differences from the reference tools").
      out +=
          fmt::format("\t\t\t\t\t\t{{\"disk_device\": {}, ", JsonString(report.display_names[i]));
      if (layout_.extended) {
        const char* u = ExtendedUnit(layout_.unit);
        const auto dirs = Directions(r);
        out += fmt::format(
            "\"r/s\": {}, \"w/s\": {}, \"d/s\": {}, \"f/s\": {}, "
            "\"r{u}/s\": {}, \"w{u}/s\": {}, \"d{u}/s\": {}, "
            "\"rrqm/s\": {}, \"wrqm/s\": {}, \"drqm/s\": {}, "
            "\"rrqm\": {}, \"wrqm\": {}, \"drqm\": {}, "
            "\"r_await\": {}, \"w_await\": {}, \"d_await\": {}, \"f_await\": {}, "
            "\"rareq-sz\": {}, \"wareq-sz\": {}, \"dareq-sz\": {}, "
            "\"aqu-sz\": {}, \"util\": {}}}",
            F2(dirs[0].ios_per_s), F2(dirs[1].ios_per_s), F2(dirs[2].ios_per_s),
            F2(r.flushes_per_s), F2(dirs[0].sectors_per_s / div), F2(dirs[1].sectors_per_s / div),
            F2(dirs[2].sectors_per_s / div), F2(dirs[0].merges_per_s), F2(dirs[1].merges_per_s),
            F2(dirs[2].merges_per_s), F2(dirs[0].merge_pct), F2(dirs[1].merge_pct),
            F2(dirs[2].merge_pct), F2(dirs[0].await_ms), F2(dirs[1].await_ms), F2(dirs[2].await_ms),
            F2(r.flush_await_ms), F2(dirs[0].request_sectors / 2), F2(dirs[1].request_sectors / 2),
            F2(dirs[2].request_sectors / 2), F2(r.queue_size), F2(r.util_pct), fmt::arg("u", u));
      } else {
        const char* u = BasicUnit(layout_.unit);
        const uint64_t idiv = SectorDivisorInt(layout_.unit);
        out += fmt::format(
            "\"tps\": {}, \"{u}_read/s\": {}, \"{u}_wrtn/s\": {}, \"{u}_dscd/s\": "
            "{}, \"{u}_read\": {}, \"{u}_wrtn\": {}, \"{u}_dscd\": {}}}",
            F2(r.transfers_per_s), F2(r.read_sectors_per_s / div), F2(r.write_sectors_per_s / div),
            F2(r.discard_sectors_per_s / div), r.read_sectors / idiv, r.write_sectors / idiv,
            r.discard_sectors / idiv, fmt::arg("u", u));
      }
    }
    out += "\n\t\t\t\t\t]\n";
  }
  out += "\t\t\t\t}";
  return out;
}

std::string IostatJsonFormatter::End() const { return "\n\t\t\t]\n\t\t}\n\t]\n}}\n"; }

}  // namespace iowatch::daemon
