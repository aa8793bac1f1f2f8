// POST /v1/embeddings. The vector is defined by the KV-cache signals work; until it lands the
// route exists and says so, rather than returning a made-up vector.
#include "server/server_impl.h"

namespace kvscope::server {

json embeddings_response(const Server::Impl& s, const json& body) {
  if (!body.is_object()) throw invalid_request("the request body must be a JSON object");
  if (auto m = body.find("model"); m != body.end() && m->is_string() && m->get<std::string>() != s.model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + m->get<std::string>() + "' does not exist", "model",
                   "model_not_found");
  throw ApiError(501, "not_implemented_error",
                 "embeddings are not implemented yet: kvscope will derive them from the KV cache (signals work)", "",
                 "not_implemented");
}

}  // namespace kvscope::server
