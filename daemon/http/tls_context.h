// The server-side TLS configuration: a boost::asio::ssl::context holding one
// certificate chain and its private key (PEM files), TLS 1.2 or newer only.
// The files are read once, at start-up; every failure names the file it is
// about. Encrypted private keys are refused rather than prompting for a
// passphrase on the terminal (OpenSSL's default), which would hang a daemon.
// Thread-safety: the returned context is immutable after creation and may be
// shared by every connection.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "common/result.h"

namespace iowatch::daemon::http {

Result<std::shared_ptr<boost::asio::ssl::context>> MakeTlsServerContext(
    const std::string& cert_file, const std::string& key_file);

}  // namespace iowatch::daemon::http
