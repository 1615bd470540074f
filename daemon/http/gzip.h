// gzip (RFC 1952) compression of response bodies with zlib, one-shot or as a
// stream of pieces, and the Accept-Encoding check that decides whether a
// client may receive it. Prometheus scrapes send "Accept-Encoding: gzip"; a
// /metrics page of a host with many devices shrinks about tenfold even at
// zlib's fastest level, which is the level used here because compression runs
// on the io_context thread.
// Thread-safety: the functions are pure; a GzipStream has one user at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

struct z_stream_s;  // zlib's z_stream, kept out of this header

namespace iowatch::daemon::http {

// zlib's fastest level: a few ms per MiB, and only ~10 % larger than level 6
// on exposition text.
inline constexpr int kGzipLevel = 1;

// Bodies smaller than this are sent as they are: gzip's ~20-byte framing and
// the CPU are not worth it.
inline constexpr size_t kGzipMinBytes = 1024;

// One gzip member written piece by piece, so that a body rendered in pieces
// is compressed without ever being whole in memory: zlib's state (about
// 256 KiB at the default window and memLevel) plus whatever output it has
// released is all a stream holds.
class GzipStream {
 public:
  static Result<GzipStream> Create(int level = kGzipLevel);

  // Compresses `in` and appends to `out` the output zlib releases, which may
  // be nothing: deflate buffers input until it has a block's worth. `finish`
  // ends the member (everything buffered, then CRC-32 and length); the
  // stream accepts nothing after that.
  Status Write(std::string_view in, bool finish, std::string& out);

 private:
  struct End {
    void operator()(z_stream_s* zs) const;
  };
  explicit GzipStream(std::unique_ptr<z_stream_s, End> zs) : zs_(std::move(zs)) {}

  // On the heap: zlib's state points back at its z_stream, which must not move.
  std::unique_ptr<z_stream_s, End> zs_;
};

// The whole of `data` as one gzip member (header, deflate stream, CRC-32).
Result<std::string> GzipCompress(std::string_view data, int level = kGzipLevel);

// True if an Accept-Encoding header value (RFC 9110 section 12.5.3) accepts
// "gzip" (or "x-gzip", or "*") with a non-zero q-value.
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace iowatch::daemon::http
