// libcurl, loaded (dlopen) when a command first pushes rather than linked:
// only `iowatch probe` and `iowatch sweep --push-gateway` push, and linking
// it mapped libcurl and the 25 libraries under it (GnuTLS, Kerberos, LDAP,
// SSH, RTMP, …) into every process, `iowatch serve` included: about 4 MiB
// of the daemon's resident memory (docs/benchmarks.md, "`iowatch serve`
// against prometheus-node-exporter"). The headers still give the types and constants.
// Thread-safety: LoadCurl() may be called from any thread; the library is
// loaded and initialised (curl_global_init) once, and never unloaded.
#pragma once

#include <curl/curl.h>

#include "common/result.h"

namespace iowatch::daemon {

// The curl functions a push calls.
struct CurlLibrary {
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

// libcurl.so.4 loaded and initialised, or why not (not installed: the error
// names the Debian package).
Result<const CurlLibrary*> LoadCurl();

}  // namespace iowatch::daemon
