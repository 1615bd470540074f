// One-shot gzip (RFC 1952) compression of a response body with zlib, and the
// Accept-Encoding check that decides whether a client may receive it.
// Prometheus scrapes send "Accept-Encoding: gzip"; a /metrics page of a host
// with many devices shrinks about tenfold even at zlib's fastest level, which
// is the level used here because compression runs on the io_context thread.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch::daemon::http {

// zlib's fastest level: a few ms per MiB, and only ~10 % larger than level 6
// on exposition text.
inline constexpr int kGzipLevel = 1;

// Bodies smaller than this are sent as they are: gzip's ~20-byte framing and
// the CPU are not worth it.
inline constexpr size_t kGzipMinBytes = 1024;

// The whole of `data` as one gzip member (header, deflate stream, CRC-32).
Result<std::string> GzipCompress(std::string_view data, int level = kGzipLevel);

// True if an Accept-Encoding header value (RFC 9110 section 12.5.3) accepts
// "gzip" (or "x-gzip", or "*") with a non-zero q-value.
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace iowatch::daemon::http
