// /v1/sessions: saving a conversation's KV (a session's pinned blocks) to --session-dir and
// restoring it, also in a later server process. Files are named by the server from the tenant and a
// validated id (letters, digits, '-', '_', '.', at most 64, not starting with '.'), so nothing a
// client sends becomes a path. Under --api-key a tenant lists, restores and deletes only its own.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "engine/session_file.h"

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
  // Messages name the client's id only: the engine's key and the file's path are internal.
  auto not_found = [&](const std::string& what) {
    return ApiError(404, "invalid_request_error", what, "session_id", "session_not_found");
  };
  json out = {{"id", id}, {"object", "session"}};
  if (action == "save") {
    std::optional<std::vector<uint8_t>> bytes;
    try {
      bytes = engine->export_session(key, session_secret);
    } catch (const InputError& e) {
      throw invalid_request(std::string("cannot save session '") + id + "': " + e.what(), "session_id", "invalid_value");
    }
    // Also when another request dropped or expired it since the client last used it.
    if (!bytes) throw not_found("no session '" + id + "' in memory: send a completion with \"session_id\": \"" + id + "\" first");
    std::error_code ec;
    fs::create_directories(opt.session_dir, ec);
    // A name of its own per save, so concurrent saves of one session never write the same file;
    // the rename makes the last one win whole, and a crash never leaves a half file under the real name.
    static std::atomic<uint64_t> counter{0};
    const std::string tmp = path + "." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + ".tmp";
    try {
      write_session_bytes(tmp, *bytes, true);
    } catch (const InputError& e) {
      fs::remove(tmp, ec);
      throw ApiError(500, "server_error", std::string("cannot store the session file: ") + e.what());
    }
    fs::rename(tmp, path, ec);
    if (ec) {
      const std::string why = ec.message();
      fs::remove(tmp, ec);
      throw ApiError(500, "server_error", "cannot store the session file: " + why);
    }
    out["bytes"] = bytes->size();
    out["saved"] = true;
  } else if (action == "restore") {
    auto fail = [&](const std::exception& e) {
      return ApiError(409, "invalid_request_error", std::string("cannot restore session '") + id + "': " + e.what(), "session_id",
                      "session_mismatch");
    };
    // Read and verified on this request's thread; the engine's lock is taken only to copy blocks in.
    std::optional<SessionImage> img;
    try {
      auto bytes = read_session_bytes(path, opt.session_max_bytes);
      if (!bytes) throw not_found("no saved session '" + id + "'");
      img = engine->verify_session(std::move(*bytes), session_secret);
    } catch (const InputError& e) {  // not a regular file, too large, damaged, unsigned, another model, other KV types
      throw fail(e);
    }
    try {
      engine->import_session(key, *img);
    } catch (const LimitError& e) {
      throw invalid_request(std::string("cannot restore session '") + id + "': " + e.what(), "session_id",
                            "context_length_exceeded");
    } catch (const InputError& e) {
      throw fail(e);
    }
    out["restored"] = true;
  } else {  // delete
    std::error_code ec;
    const bool had_file = fs::remove(path, ec), had_mem = engine->has_session(key);
    if (had_mem) engine->drop_session(key);
    if (!had_file && !had_mem) throw not_found("no session '" + id + "'");
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
  // A directory not made yet (or removed since) holds no sessions.
  if (!fs::exists(opt.session_dir, ec)) return {{"object", "list"}, {"data", data}};
  for (const auto& e : fs::directory_iterator(opt.session_dir, ec)) {
    const std::string name = e.path().filename().string();
    std::error_code fe;
    if (!e.is_regular_file(fe) || name.rfind(prefix, 0) != 0 || e.path().extension() != kExt) continue;
    const std::string id = name.substr(prefix.size(), name.size() - prefix.size() - std::string(kExt).size());
    const auto size = e.file_size(fe);
    if (fe) continue;  // deleted while listed
    data.push_back({{"id", id}, {"object", "session"}, {"bytes", size}});
  }
  if (ec) throw ApiError(500, "server_error", "cannot read the session directory: " + ec.message());
  return {{"object", "list"}, {"data", data}};
}

namespace {

// The session secret's bytes from a file (a trailing newline is not part of it).
std::string read_secret(const std::string& path) {
  auto bytes = read_session_bytes(path, 4096);
  if (!bytes) throw InputError("session secret file " + path + " does not exist");
  std::string s(bytes->begin(), bytes->end());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.size() < 16) throw InputError("session secret file " + path + " holds fewer than 16 bytes");
  return s;
}

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

void Server::Impl::setup_sessions() {
  if (opt.session_dir.empty()) return;
  std::error_code ec;
  fs::create_directories(opt.session_dir, ec);
  if (ec) throw InputError("--session-dir " + opt.session_dir + ": cannot create it: " + ec.message());
  // Temporary files of saves that never finished (a crash, a kill -9): NAME.kvsession.PID.N.tmp of a
  // process no longer running, or the older NAME.kvsession.tmp. A live server's are left alone (two
  // servers may share the directory).
  for (const auto& e : fs::directory_iterator(opt.session_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".tmp" || name.find(kExt) == std::string::npos) continue;
    const std::string rest = name.substr(name.find(kExt) + std::string(kExt).size());  // ".PID.N.tmp" or ".tmp"
    long pid = 0;
    if (rest != ".tmp" && (std::sscanf(rest.c_str(), ".%ld.", &pid) != 1 || pid_alive(pid))) continue;
    std::error_code re;
    fs::remove(e.path(), re);
  }
  if (!opt.session_secret_file.empty()) {
    session_secret = read_secret(opt.session_secret_file);
    return;
  }
  // No secret given: one generated once and kept beside the sessions (a name no session id can take).
  const std::string path = (fs::path(opt.session_dir) / ".session-secret").string();
  if (!fs::exists(path)) {
    uint8_t raw[32];
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    if (!rnd.read(reinterpret_cast<char*>(raw), sizeof raw)) throw InputError("cannot read /dev/urandom for the session secret");
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (uint8_t b : raw) s += hex[b >> 4], s += hex[b & 15];
    try {
      write_session_bytes(path, std::vector<uint8_t>(s.begin(), s.end()), true);
    } catch (const InputError&) {
      // Another server sharing the directory made it first: its secret is read below.
      if (!fs::exists(path)) throw;
    }
  }
  session_secret = read_secret(path);
}

}  // namespace kvscope::server
