#include "daemon/http/stream_body.h"

#include <boost/system/error_code.hpp>
#include <stdexcept>

namespace iowatch::daemon::http::internal {

namespace {
using Buffers = boost::optional<std::pair<boost::asio::const_buffer, bool>>;
}  // namespace

void StreamBody::writer::init(boost::beast::error_code& ec) {
  ec = {};
  piece_.reserve(kStreamPieceBytes);
  if (body_.gzip) {
    auto gzip = GzipStream::Create();
    if (!gzip) {
      Fail(ec);
      return;
    }
    gzip_.emplace(std::move(*gzip));
  }
}

Buffers StreamBody::writer::get(boost::beast::error_code& ec) {
  ec = {};
  try {
    return Next();
  } catch (...) {
    return Fail(ec);
  }
}

Buffers StreamBody::writer::Next() {
  while (!done_) {
    piece_.clear();
    done_ = !body_.produce(piece_);
    if (!gzip_) {
      if (!piece_.empty()) return Buffers({boost::asio::buffer(piece_), !done_});
      continue;
    }
    packed_.clear();
    if (auto written = gzip_->Write(piece_, /*finish=*/done_, packed_); !written) {
      throw std::runtime_error(written.error().ToString());
    }
    if (!packed_.empty()) return Buffers({boost::asio::buffer(packed_), !done_});
  }
  return boost::none;
}

Buffers StreamBody::writer::Fail(boost::beast::error_code& ec) {
  body_.failed = true;
  done_ = true;
  ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
  return boost::none;
}

}  // namespace iowatch::daemon::http::internal
