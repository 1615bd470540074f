#include "daemon/landing_page.h"

#include <fmt/format.h>

#include "daemon/version.h"

namespace iowatch::daemon {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

http::Response LandingPage(const Snapshot& snapshot, const std::string& listen_endpoint) {
  std::string rows;
  for (const collectors::BlockDevice& d : *snapshot.block_devices) {
    const std::string rotational = d.queue.rotational ? (*d.queue.rotational ? "yes" : "no") : "?";
    rows += fmt::format(
        "<tr><td>{}</td><td>{}:{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        HtmlEscape(d.name), d.major, d.minor, HtmlEscape(d.dm_name), HtmlEscape(d.model),
        rotational, HtmlEscape(d.queue.scheduler));
  }
  std::string body = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>iowatch</title>"
      "<style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:2px 10px;text-align:left}}"
      "</style></head>\n<body><h1>iowatch {}</h1>\n<p>Listening on {}. "
      "<a href=\"/metrics\">/metrics</a> · <a href=\"/healthz\">/healthz</a></p>\n"
      "<h2>Devices ({})</h2>\n<table><tr><th>device</th><th>maj:min</th><th>dm name</th>"
      "<th>model</th><th>rotational</th><th>scheduler</th></tr>\n{}</table>\n</body></html>\n",
      kVersion, HtmlEscape(listen_endpoint), snapshot.block_devices->size(), rows);
  return http::Response{200, "text/html; charset=utf-8", std::move(body), {}, true};
}

}  // namespace iowatch::daemon
