// POST /v1/embeddings: vectors read from the KV cache (signals::Embedder, the spec's aggregate_kv:
// per token [K|V] averaged over the middle third of the layers and over KV heads, pooled over the
// input by the mean). OpenAI's request shape: input as a string, an array of strings, an array of
// token ids or an array of such arrays; `dimensions` truncates and renormalizes; encoding_format
// "float" or "base64" (little-endian float32, as OpenAI's clients decode it). Extension fields:
// `kvscope_pool` ("mean" | "last") and `kvscope_layers` ("mid" | "all" | "a-b" | "a,b,c").
#include <cstring>

#include "server/server_impl.h"
#include "signals/embedding.h"
#include "util/error.h"

namespace kvscope::server {
namespace {

std::string base64_of(const std::vector<float>& v) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());  // x86-64 is little-endian, as the format wants
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = static_cast<uint8_t>(bytes[i]);
    const uint32_t b1 = i + 1 < bytes.size() ? static_cast<uint8_t>(bytes[i + 1]) : 0;
    const uint32_t b2 = i + 2 < bytes.size() ? static_cast<uint8_t>(bytes[i + 2]) : 0;
    const uint32_t n = (b0 << 16) | (b1 << 8) | b2;
    out += tbl[(n >> 18) & 63];
    out += tbl[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? tbl[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? tbl[n & 63] : '=';
  }
  return out;
}

// The inputs as token lists (strings tokenized like completion prompts, BOS as the model wants).
std::vector<std::vector<int32_t>> inputs_of(const Model& model, const json& in) {
  auto from_string = [&](const json& s) {
    const std::string text = s.get<std::string>();
    if (text.empty()) throw invalid_request("'input' must not contain empty strings", "input");
    if (!tok::is_valid_utf8(text)) throw invalid_request("'input' is not valid UTF-8", "input", "invalid_encoding");
    return model.tokenizer().encode(text, true, false);  // user text: special-token spellings stay plain
  };
  auto from_ids = [&](const json& a) {
    std::vector<int32_t> ids;
    for (const auto& t : a) {
      if (!t.is_number_integer()) throw invalid_request("token arrays in 'input' must hold integers", "input");
      const int64_t id = t.get<int64_t>();
      if (id < 0 || id >= model.hparams().n_vocab)
        throw invalid_request("token id " + std::to_string(id) + " in 'input' is outside the vocabulary", "input");
      ids.push_back(static_cast<int32_t>(id));
    }
    if (ids.empty()) throw invalid_request("'input' must not contain empty token arrays", "input");
    return ids;
  };
  std::vector<std::vector<int32_t>> out;
  if (in.is_string()) {
    out.push_back(from_string(in));
  } else if (in.is_array() && !in.empty()) {
    if (in[0].is_number_integer()) {
      out.push_back(from_ids(in));
    } else {
      for (const auto& x : in) {
        if (x.is_string()) out.push_back(from_string(x));
        else if (x.is_array()) out.push_back(from_ids(x));
        else throw invalid_request("'input' items must be strings or token arrays", "input");
      }
    }
  } else {
    throw invalid_request("'input' must be a non-empty string or array", "input");
  }
  if (out.size() > 2048) throw invalid_request("'input' may hold at most 2048 items", "input");
  return out;
}

}  // namespace

json embeddings_response(const Server::Impl& s, const json& body) {
  if (!body.is_object()) throw invalid_request("the request body must be a JSON object");
  if (auto m = body.find("model"); m != body.end() && m->is_string() && m->get<std::string>() != s.model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + m->get<std::string>() + "' does not exist", "model",
                   "model_not_found");
  auto in = body.find("input");
  if (in == body.end()) throw invalid_request("'input' is required", "input");
  signals::EmbeddingOptions o;
  if (auto d = body.find("dimensions"); d != body.end() && !d->is_null()) {
    if (!d->is_number_integer() || d->get<int64_t>() < 1) throw invalid_request("'dimensions' must be a positive integer", "dimensions");
    o.dimensions = static_cast<int>(std::min<int64_t>(d->get<int64_t>(), 1 << 20));
  }
  std::string format = "float";
  if (auto f = body.find("encoding_format"); f != body.end() && !f->is_null()) {
    if (!f->is_string() || (f->get<std::string>() != "float" && f->get<std::string>() != "base64"))
      throw invalid_request("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
    format = f->get<std::string>();
  }
  if (auto p = body.find("kvscope_pool"); p != body.end()) {
    auto pool = p->is_string() ? signals::parse_pool(p->get<std::string>()) : std::nullopt;
    if (!pool) throw invalid_request("'kvscope_pool' must be \"mean\" or \"last\"", "kvscope_pool");
    o.pool = *pool;
  }
  if (auto l = body.find("kvscope_layers"); l != body.end()) {
    if (!l->is_string()) throw invalid_request("'kvscope_layers' must be a string such as \"mid\" or \"2-5\"", "kvscope_layers");
    o.layers = l->get<std::string>();
  }
  const auto inputs = inputs_of(*s.model, *in);
  std::vector<std::vector<float>> vecs;
  int n_tokens = 0;
  for (const auto& t : inputs) n_tokens += static_cast<int>(t.size());
  try {
    std::lock_guard lk(s.embed_mu);  // the Embedder owns one KV cache; requests take turns
    if (!s.embedder) {
      ContextParams cp;
      cp.n_threads = s.opt.engine.n_threads;
      s.embedder = std::make_unique<signals::Embedder>(*s.model, cp);
    }
    if (o.dimensions > s.embedder->embedding_dim(o))
      throw invalid_request("'dimensions' is larger than the embedding size " + std::to_string(s.embedder->embedding_dim(o)),
                            "dimensions");
    vecs = s.embedder->embed_many(inputs, o);
  } catch (const LimitError& e) {
    throw invalid_request(e.what(), "input", "context_length_exceeded");
  } catch (const InputError& e) {
    throw invalid_request(e.what(), "input");
  }
  json data = json::array();
  for (size_t i = 0; i < vecs.size(); ++i) {
    json item = {{"object", "embedding"}, {"index", i}};
    if (format == "base64") item["embedding"] = base64_of(vecs[i]);
    else item["embedding"] = vecs[i];
    data.push_back(std::move(item));
  }
  return {{"object", "list"},
          {"data", std::move(data)},
          {"model", s.model_id},
          {"usage", {{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}}};
}

}  // namespace kvscope::server
