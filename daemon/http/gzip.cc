#include "daemon/http/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>

namespace iowatch::daemon::http {
namespace {

// windowBits 15 plus 16 asks zlib for a gzip header and trailer instead of
// zlib's own framing (zlib.h, deflateInit2).
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;
constexpr size_t kMaxSliceBytes = size_t{1} << 30;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// "q=0", "q=0.0", "q=0.000" mean "not acceptable"; anything else (or no q) is.
bool QualityIsZero(std::string_view params) {
  while (!params.empty()) {
    const size_t semi = params.find(';');
    std::string_view param = Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    if (param.size() < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=') continue;
    param.remove_prefix(2);
    if (param.empty() || param[0] != '0') return false;
    for (char c : param.substr(1)) {
      if (c != '.' && c != '0') return false;
    }
    return true;
  }
  return false;
}

}  // namespace

void GzipStream::End::operator()(z_stream_s* zs) const {
  deflateEnd(zs);
  delete zs;
}

Result<GzipStream> GzipStream::Create(int level) {
  std::unique_ptr<z_stream_s, End> zs(new z_stream_s{});
  if (deflateInit2(zs.get(), level, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    delete zs.release();  // deflateEnd is for initialised streams only
    return MakeError(ErrorCode::kInvalidArgument, "gzip: deflateInit2 failed");
  }
  return GzipStream(std::move(zs));
}

Status GzipStream::Write(std::string_view in, bool finish, std::string& out) {
  if (!zs_) return MakeError(ErrorCode::kInvalidArgument, "gzip: the stream is finished");
  z_stream_s& zs = *zs_;
  std::array<char, 16384> chunk;
  for (;;) {
    // avail_in is 32 bits wide: larger inputs go in slices.
    const size_t slice = std::min<size_t>(in.size(), kMaxSliceBytes);
    const bool last = slice == in.size();
    const int flush = finish && last ? Z_FINISH : Z_NO_FLUSH;
    // zlib's API is not const-correct; deflate never writes through next_in.
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(slice);
    int rc = Z_OK;
    do {  // until zlib leaves output space unused: it has nothing more to give now
      zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
      zs.avail_out = static_cast<uInt>(chunk.size());
      rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR) return MakeError(ErrorCode::kIo, "gzip: deflate failed");
      out.append(chunk.data(), chunk.size() - zs.avail_out);
    } while (zs.avail_out == 0);
    if (flush == Z_FINISH) {
      zs_.reset();
      if (rc != Z_STREAM_END) return MakeError(ErrorCode::kIo, "gzip: deflate did not finish");
      return {};
    }
    if (last) return {};
    in.remove_prefix(slice);
  }
}

Result<std::string> GzipCompress(std::string_view data, int level) {
  auto stream = GzipStream::Create(level);
  if (!stream) return ErrorOf(stream);
  // Reserve for text's usual eightfold shrink rather than deflateBound():
  // a worst-case buffer would touch as many pages as the input.
  std::string out;
  out.reserve(data.size() / 8 + 1024);
  if (auto written = stream->Write(data, /*finish=*/true, out); !written) {
    return ErrorOf(written);
  }
  return out;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  // An explicit "gzip" entry wins over "*" ("gzip;q=0, *" refuses gzip).
  int gzip = -1;  // -1 not mentioned, 0 refused, 1 accepted
  int any = -1;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    const std::string_view item = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view{} : accept_encoding.substr(comma + 1);
    const size_t semi = item.find(';');
    const std::string_view coding = Trim(item.substr(0, semi));
    const std::string_view params =
        semi == std::string_view::npos ? std::string_view{} : item.substr(semi + 1);
    const int verdict = QualityIsZero(params) ? 0 : 1;
    if (EqualsIgnoreCase(coding, "gzip") || EqualsIgnoreCase(coding, "x-gzip")) {
      gzip = std::max(gzip, verdict);
    } else if (coding == "*") {
      any = std::max(any, verdict);
    }
  }
  return gzip >= 0 ? gzip == 1 : any == 1;
}

}  // namespace iowatch::daemon::http
