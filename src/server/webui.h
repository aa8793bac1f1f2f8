// The web UI's files (src/server/webui/), compiled into the binary by cmake/embed_files.cmake.
#pragma once
#include <string_view>
#include <utility>
#include <vector>

namespace kvscope::server {

// (file name, contents) of every embedded file; defined in the generated webui_assets.cpp.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_web_files();

struct WebFile {
  std::string_view data;
  std::string_view content_type;
};
// The embedded file `name` (e.g. "chat.js"); false when there is none.
bool find_web_file(std::string_view name, WebFile& out);

}  // namespace kvscope::server
