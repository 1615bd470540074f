#include "daemon/http/tls_context.h"

#include <openssl/ssl.h>

#include "common/file_tree.h"

namespace iowatch::daemon::http {
namespace asio = boost::asio;

namespace {

// A certificate chain or key is a few kB; the limit keeps a cert_file of
// /dev/zero from taking the daemon's memory.
Result<std::string> ReadPemFile(const std::string& path, std::string_view what) {
  const std::string words = fmt::format("cannot read TLS {} file", what);
  return ReadFile(path, {.open_error = words, .read_error = words, .max_bytes = 1 << 20});
}

std::unexpected<Error> Invalid(std::string_view what, const boost::system::error_code& ec,
                               const std::string& path) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("not a usable PEM {}: {}", what, ec.message()), path);
}

}  // namespace

Result<std::shared_ptr<asio::ssl::context>> MakeTlsServerContext(const std::string& cert_file,
                                                                 const std::string& key_file) {
  if (cert_file.empty() || key_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "TLS needs both a certificate file and a private key file");
  }
  auto cert = ReadPemFile(cert_file, "certificate");
  if (!cert) return ErrorOf(cert);
  auto key = ReadPemFile(key_file, "private key");
  if (!key) return ErrorOf(key);

  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  context->set_password_callback(
      [](std::size_t, asio::ssl::context::password_purpose) { return std::string(); });

  boost::system::error_code ec;
  context->use_certificate_chain(asio::buffer(*cert), ec);
  if (ec) return Invalid("certificate chain", ec, cert_file);
  context->use_private_key(asio::buffer(*key), asio::ssl::context::pem, ec);
  if (ec) return Invalid("private key (encrypted keys are not supported)", ec, key_file);
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the private key does not match the certificate {}", cert_file),
                     key_file);
  }
  return context;
}

}  // namespace iowatch::daemon::http
