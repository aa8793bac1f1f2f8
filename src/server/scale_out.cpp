// What a replica behind a router needs from a request: the session named by the X-Session-Id header
// (the header nginx hashes on for affinity, so one value both routes and names the conversation) and
// the shared KV tier's part before submission (docs/scale-out.md).
#include <algorithm>

#include "server/server_impl.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::server {

void Server::Impl::apply_session_header(const std::string& h, GenRequest& g) const {
  if (h.empty()) return;
  if (!tok::is_valid_utf8(h) || h.size() > 256)
    throw invalid_request("the X-Session-Id header must be valid UTF-8 of at most 256 bytes", "session_id", "invalid_value");
  if (g.session_id.empty())
    g.session_id = h;
  else if (g.session_id != h)
    throw invalid_request("'session_id' (\"" + g.session_id + "\") and the X-Session-Id header (\"" + h +
                              "\") name different sessions",
                          "session_id", "invalid_value");
}

int Server::Impl::tier_prefetch(const std::vector<int32_t>& prompt, uint64_t salt, const std::string& key, int& computing) {
  computing = static_cast<int>(prompt.size());
  // A session this replica never saw (its replica died, or the router moved it): pin it from the
  // tier, so the turn continues on the exact K/V of the earlier ones.
  if (!key.empty() && engine->has_session(key)) return 0;  // pinned here: nothing to fetch
  if (!key.empty())
    if (const int pinned = kv_tier->restore_session(key); pinned > 0)
      return std::min(pinned, static_cast<int>(prompt.size()) - 1);  // at most; the engine adopts the matching part
  return kv_tier->prefetch(prompt, salt, &computing);
}

}  // namespace kvscope::server
