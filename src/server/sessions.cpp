// /v1/sessions: saving a conversation's KV (a session's pinned blocks) to --session-dir and
// restoring it, also in a later server process. Files are named by the server from the tenant and a
// validated id (letters, digits, '-', '_', '.', at most 64, not starting with '.'), so nothing a
// client sends becomes a path. Under --api-key a tenant lists, restores and deletes only its own.
#include <cctype>
#include <filesystem>
#include <system_error>

#include "server/server_impl.h"
#include "util/error.h"

namespace kvscope::server {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExt = ".kvsession";

void require_enabled(const ServerOptions& o) {
  if (o.session_dir.empty())
    throw ApiError(404, "invalid_request_error", "sessions are not enabled on this server (start it with --session-dir DIR)",
                   "", "sessions_disabled");
}

}  // namespace

void validate_session_id(const std::string& id, const char* param) {
  bool ok = !id.empty() && id.size() <= 64 && id[0] != '.';
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (!ok)
    throw invalid_request("invalid session id: use 1-64 letters, digits, '-', '_' or '.' (not starting with '.')", param,
                          "invalid_value");
}

std::string Server::Impl::session_key(uint64_t tenant, const std::string& id) const {
  return std::to_string(tenant) + "/" + id;
}

std::string Server::Impl::session_path(uint64_t tenant, const std::string& id) const {
  return (fs::path(opt.session_dir) / (std::to_string(tenant) + "-" + id + kExt)).string();
}

json Server::Impl::session_request(const httplib::Request& req, const std::string& id, const std::string& action) {
  require_enabled(opt);
  require_serving();
  validate_session_id(id, "session_id");
  const uint64_t tenant = tenant_salt(req);
  const std::string key = session_key(tenant, id), path = session_path(tenant, id);
  json out = {{"id", id}, {"object", "session"}};
  if (action == "save") {
    if (!engine->has_session(key))
      throw ApiError(404, "invalid_request_error",
                     "no session '" + id + "' in memory: send a completion with \"session_id\": \"" + id + "\" first",
                     "session_id", "session_not_found");
    std::error_code mk;
    fs::create_directories(opt.session_dir, mk);
    const std::string tmp = path + ".tmp";
    engine->save_session(key, tmp);
    std::error_code ec;
    fs::rename(tmp, path, ec);  // a crash mid-write never leaves a half file under the real name
    if (ec) {
      fs::remove(tmp, ec);
      throw ApiError(500, "server_error", "cannot store the session file: " + ec.message());
    }
    out["bytes"] = fs::file_size(path, ec);
    out["saved"] = true;
  } else if (action == "restore") {
    if (!fs::exists(path))
      throw ApiError(404, "invalid_request_error", "no saved session '" + id + "'", "session_id", "session_not_found");
    try {
      engine->restore_session(key, path);
    } catch (const LimitError& e) {
      throw invalid_request(std::string("cannot restore session '") + id + "': " + e.what(), "session_id",
                            "context_length_exceeded");
    } catch (const InputError& e) {  // damaged, another model, other KV types
      throw ApiError(409, "invalid_request_error", std::string("cannot restore session '") + id + "': " + e.what(),
                     "session_id", "session_mismatch");
    }
    out["restored"] = true;
  } else {  // delete
    std::error_code ec;
    const bool had_file = fs::remove(path, ec), had_mem = engine->has_session(key);
    if (had_mem) engine->drop_session(key);
    if (!had_file && !had_mem)
      throw ApiError(404, "invalid_request_error", "no session '" + id + "'", "session_id", "session_not_found");
    out["deleted"] = true;
  }
  return out;
}

json Server::Impl::session_list(const httplib::Request& req) {
  require_enabled(opt);
  require_serving();
  const std::string prefix = std::to_string(tenant_salt(req)) + "-";
  json data = json::array();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(opt.session_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.rfind(prefix, 0) != 0 || e.path().extension() != kExt) continue;
    const std::string id = name.substr(prefix.size(), name.size() - prefix.size() - std::string(kExt).size());
    data.push_back({{"id", id}, {"object", "session"}, {"bytes", e.file_size(ec)}});
  }
  if (ec) throw ApiError(500, "server_error", "cannot read the session directory: " + ec.message());
  return {{"object", "list"}, {"data", data}};
}

}  // namespace kvscope::server
