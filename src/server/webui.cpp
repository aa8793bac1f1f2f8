#include "server/webui.h"

namespace kvscope::server {

namespace {

std::string_view content_type_of(std::string_view name) {
  auto ends = [&](std::string_view s) { return name.size() >= s.size() && name.substr(name.size() - s.size()) == s; };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace

bool find_web_file(std::string_view name, WebFile& out) {
  for (const auto& [n, data] : embedded_web_files())
    if (n == name) {
      out = {data, content_type_of(n)};
      return true;
    }
  return false;
}

}  // namespace kvscope::server
