#include "daemon/metrics/push/curl_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

namespace iowatch::daemon {
namespace {

constexpr char kSoname[] = "libcurl.so.4";

// `symbol` of the library into `function`; false when it lacks it.
template <class Function>
bool Resolve(void* library, const char* symbol, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  return function != nullptr;
}

Result<CurlLibrary> Open() {
  void* library = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("cannot push: cannot load {} ({}); install the libcurl4 package",
                                 kSoname, why != nullptr ? why : "no reason given"));
  }
  CurlLibrary curl;
  CURLcode (*global_init)(long) = nullptr;
  const bool complete = Resolve(library, "curl_global_init", global_init) &&
                        Resolve(library, "curl_easy_init", curl.easy_init) &&
                        Resolve(library, "curl_easy_setopt", curl.easy_setopt) &&
                        Resolve(library, "curl_easy_perform", curl.easy_perform) &&
                        Resolve(library, "curl_easy_getinfo", curl.easy_getinfo) &&
                        Resolve(library, "curl_easy_cleanup", curl.easy_cleanup) &&
                        Resolve(library, "curl_easy_strerror", curl.easy_strerror) &&
                        Resolve(library, "curl_slist_append", curl.slist_append) &&
                        Resolve(library, "curl_slist_free_all", curl.slist_free_all);
  if (!complete) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("cannot push: {} lacks a function iowatch calls", kSoname));
  }
  if (const CURLcode init = global_init(CURL_GLOBAL_DEFAULT); init != CURLE_OK) {
    return MakeError(ErrorCode::kIo, fmt::format("cannot push: curl_global_init failed ({}: {})",
                                                 static_cast<int>(init), curl.easy_strerror(init)));
  }
  return curl;
}

}  // namespace

Result<const CurlLibrary*> LoadCurl() {
  static const Result<CurlLibrary> kLoaded = Open();
  if (!kLoaded) return std::unexpected(kLoaded.error());
  return &*kLoaded;
}

}  // namespace iowatch::daemon
