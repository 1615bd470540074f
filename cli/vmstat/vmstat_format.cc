#include "cli/vmstat/vmstat_format.h"

#include <fmt/format.h>

namespace iowatch::daemon {

std::string VmstatHeader(const VmstatLayout& layout, const std::string& time_zone) {
  std::string out = layout.wide
                        ? "--procs-- -----------------------memory---------------------- ---swap-- "
                          "-----io---- -system-- ----------cpu----------"
                        : "procs -----------memory---------- ---swap-- -----io---- -system-- "
                          "------cpu-----";
  if (layout.timestamp) out += " -----timestamp-----";
  out += "\n";
  const char* buff = layout.active ? "inact" : "buff";
  const char* cache = layout.active ? "active" : "cache";
  if (layout.wide) {
    out += fmt::format(
        "{:>4} {:>4} {:>12} {:>12} {:>12} {:>12} {:>4} {:>4} {:>5} {:>5} {:>4} {:>4} "
        "{:>3} {:>3} {:>3} {:>3} {:>3} {:>3}",
        "r", "b", "swpd", "free", buff, cache, "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id",
        "wa", "st", "gu");
  } else {
    // procps 4.0.2 passes "gu" here too, but its format has no slot for it.
    out += fmt::format(
        "{:>2} {:>2} {:>6} {:>6} {:>6} {:>6} {:>4} {:>4} {:>5} {:>5} {:>4} {:>4} "
        "{:>2} {:>2} {:>2} {:>2} {:>2}",
        "r", "b", "swpd", "free", buff, cache, "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id",
        "wa", "st");
  }
  if (layout.timestamp) out += fmt::format(" {:>19}", time_zone.substr(0, 19));
  out += "\n";
  return out;
}

std::string VmstatLine(const VmstatLayout& layout, const collectors::VmstatColumns& c,
                       const std::string& timestamp) {
  const uint64_t mem5 = layout.active ? c.inact : c.buff;
  const uint64_t mem6 = layout.active ? c.active : c.cache;
  std::string out;
  if (layout.wide) {
    out = fmt::format(
        "{:4} {:4} {:12} {:12} {:12} {:12} {:4} {:4} {:5} {:5} {:4} {:4} {:3} {:3} "
        "{:3} {:3} {:3} {:3}",
        c.r, c.b, c.swpd, c.free, mem5, mem6, c.si, c.so, c.bi, c.bo, c.in, c.cs, c.us, c.sy, c.id,
        c.wa, c.st, c.gu);
  } else {
    out = fmt::format(
        "{:2} {:2} {:6} {:6} {:6} {:6} {:4} {:4} {:5} {:5} {:4} {:4} {:2} {:2} {:2} "
        "{:2} {:2}",
        c.r, c.b, c.swpd, c.free, mem5, mem6, c.si, c.so, c.bi, c.bo, c.in, c.cs, c.us, c.sy, c.id,
        c.wa, c.st);
  }
  if (layout.timestamp) out += " " + timestamp;
  out += "\n";
  return out;
}

}  // namespace iowatch::daemon
