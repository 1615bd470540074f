// Text from the system (sysfs model and serial strings, dm names, config
// values) is bytes; what iowatch writes out is not: Prometheus label values
// and JSON strings must be valid UTF-8 (Prometheus refuses the scrape, our
// own baseline import refuses the file). ToValidUtf8 keeps valid UTF-8 as it
// is and replaces each byte that cannot start or continue a valid sequence
// with U+FFFD, as decoders do.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace iowatch {

bool IsValidUtf8(std::string_view text);
std::string ToValidUtf8(std::string_view text);

}  // namespace iowatch
