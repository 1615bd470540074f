// The parsers and printers of option table rows that set one JobSpec field
// (fio's off1), by the field's kind: sizes, counts, 0/1 booleans, bare
// flags, paths, times, io_uring's flags, iodepth_batch_*. Each is a template
// on a pointer to the field, so a row names its field once.
// Not part of the probes API: only job_option_table.cc includes it.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "probes/spec/job_option_table.h"
#include "probes/spec/job_option_values.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes::internal {

template <uint64_t JobSpec::*kField>
OptionCheck ParseSizeInto(JobSpec& spec, std::string_view value) {
  const auto bytes = ParseSizeValue(value);
  if (!bytes) return OptionProblem(bytes.error());
  spec.*kField = *bytes;
  return {};
}

template <uint64_t JobSpec::*kField>
PrintedValue PrintSize(const JobSpec& spec) {
  return FormatSize(spec.*kField);
}

template <typename T, T JobSpec::*kField>
PrintedValue PrintNumber(const JobSpec& spec) {
  return std::to_string(spec.*kField);
}

template <bool JobSpec::*kField>
OptionCheck ParseBoolInto(JobSpec& spec, std::string_view value) {
  const auto flag = ParseBool01(value);
  if (!flag) return OptionProblem(flag.error());
  spec.*kField = *flag;
  return {};
}

// A plain decimal count of T's range (number_ios, fsync), or of the row's range, which
// ApplyJobOption checked first (iodepth, numjobs...).
template <typename T, T JobSpec::*kField>
OptionCheck ParseCountInto(JobSpec& spec, std::string_view value) {
  const auto count = ParseUnsigned<T>(value);
  if (!count) {
    return OptionProblem(
        Found(fmt::format("expected an integer from 0 to 2^{}-1", 8 * sizeof(T)), value));
  }
  spec.*kField = *count;
  return {};
}

template <bool JobSpec::*kField>
OptionCheck ParseFlagInto(JobSpec& spec, std::string_view value) {
  const auto flag = ParseFlag(value);
  if (!flag) return OptionProblem(flag.error());
  spec.*kField = *flag;
  return {};
}

template <bool JobSpec::*kField>
PrintedValue PrintBool(const JobSpec& spec) {
  return spec.*kField ? "1" : "0";
}

// A FIO_OPT_STR_SET flag is written bare when set, as fio's job files do.
inline PrintedValue FlagText(bool on) { return on ? "" : "0"; }

template <bool IoUringOptions::*kField>
OptionCheck ParseUringFlag(JobSpec& spec, std::string_view value) {
  const auto flag = ParseFlag(value);
  if (!flag) return OptionProblem(flag.error());
  spec.uring.*kField = *flag;
  return {};
}

template <bool IoUringOptions::*kField>
PrintedValue PrintUringFlag(const JobSpec& spec) {
  return FlagText(spec.uring.*kField);
}

template <std::string JobSpec::*kField>
OptionCheck ParsePathInto(JobSpec& spec, std::string_view value) {
  auto path = ParseOnePath(value);
  if (!path) return OptionProblem(path.error());
  spec.*kField = std::move(*path);
  return {};
}

template <std::string JobSpec::*kField>
PrintedValue PrintPath(const JobSpec& spec) {
  if ((spec.*kField).empty()) return std::nullopt;
  return EscapePath(spec.*kField);
}

template <std::chrono::nanoseconds JobSpec::*kField>
OptionCheck ParseTimeInto(JobSpec& spec, std::string_view value) {
  return ParseTimeValue(value, spec.*kField);
}

template <std::chrono::nanoseconds JobSpec::*kField>
PrintedValue PrintTime(const JobSpec& spec) {
  return FormatTime(spec.*kField);
}

}  // namespace iowatch::probes::internal
