// The request headers iowatch interprets itself, through the functions the
// server calls: the basic-auth header and Accept-Encoding negotiation.
#include "daemon/http/basic_auth.h"
#include "daemon/http/gzip.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = iowatch::fuzz::AsText(data, size);
  const auto credentials = iowatch::daemon::http::ParseBasicAuthorization(text);
  if (credentials) iowatch::fuzz::Require(credentials->user.find(':') == std::string::npos);
  (void)iowatch::daemon::http::AcceptsGzip(text);
  return 0;
}
