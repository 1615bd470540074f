// Integers out of nlohmann::json, checked. get<uint64_t>() on a JSON float
// converts it without a range check, undefined behaviour for a damaged
// file's 1e300 where a count belongs (libFuzzer found it in a stored
// sweep's JSON); IntegerOf takes integers only, in the type's range, and
// throws nlohmann's own type_error or out_of_range otherwise, which the
// readers already catch and turn into a located error.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

namespace iowatch {

template <class Int>
Int IntegerOf(const nlohmann::json& j) {
  using Limits = std::numeric_limits<Int>;
  if (j.is_number_unsigned()) {
    const auto value = j.get<uint64_t>();
    if (value <= static_cast<uint64_t>(Limits::max())) return static_cast<Int>(value);
  } else if (j.is_number_integer()) {
    const auto value = j.get<int64_t>();
    if (value >= 0 ? static_cast<uint64_t>(value) <= static_cast<uint64_t>(Limits::max())
                   : Limits::is_signed && value >= static_cast<int64_t>(Limits::min())) {
      return static_cast<Int>(value);
    }
  } else {
    throw nlohmann::json::type_error::create(302, "expected an integer", &j);
  }
  throw nlohmann::json::out_of_range::create(406, "an integer out of range", &j);
}

}  // namespace iowatch
