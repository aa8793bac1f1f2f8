// POST /v1/embeddings: vectors read from the KV cache (signals::Embedder, the spec's aggregate_kv:
// per token [K|V] averaged over the middle third of the layers and over KV heads, pooled over the
// input by the mean). OpenAI's request shape: input as a string, an array of strings, an array of
// token ids or an array of such arrays; `dimensions` truncates and renormalizes; encoding_format
// "float" or "base64" (little-endian float32, as OpenAI's clients decode it). Extension fields:
// `kvscope_pool` ("mean" | "last") and `kvscope_layers` ("mid" | "all" | "a-b" | "a,b,c").
#include <chrono>
#include <cstring>
#include <memory>

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

// A request's inputs and options, shared by the handler and its content provider.
struct EmbedJob {
  std::vector<std::vector<int32_t>> inputs;
  signals::EmbeddingOptions o;
  std::string format = "float";
  int n_tokens = 0;
};

// The request's fields past `model` and `input`'s presence; throws invalid_request naming the field.
std::shared_ptr<EmbedJob> parse_embedding_job(const Model& model, const json& body, const json& in) {
  auto job = std::make_shared<EmbedJob>();
  signals::EmbeddingOptions& o = job->o;
  if (auto d = body.find("dimensions"); d != body.end() && !d->is_null()) {
    if (!d->is_number_integer() || d->get<int64_t>() < 1) throw invalid_request("'dimensions' must be a positive integer", "dimensions");
    o.dimensions = static_cast<int>(std::min<int64_t>(d->get<int64_t>(), 1 << 20));
  }
  if (auto f = body.find("encoding_format"); f != body.end() && !f->is_null()) {
    if (!f->is_string() || (f->get<std::string>() != "float" && f->get<std::string>() != "base64"))
      throw invalid_request("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
    job->format = f->get<std::string>();
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
  job->inputs = inputs_of(model, in);
  for (const auto& t : job->inputs) job->n_tokens += static_cast<int>(t.size());
  return job;
}

// The answer: OpenAI's list of embedding objects with usage.
std::string render_embeddings(const std::vector<std::vector<float>>& vecs, const EmbedJob& job, const std::string& model_id) {
  json data = json::array();
  for (size_t i = 0; i < vecs.size(); ++i) {
    json item = {{"object", "embedding"}, {"index", i}};
    if (job.format == "base64") item["embedding"] = base64_of(vecs[i]);
    else item["embedding"] = vecs[i];
    data.push_back(std::move(item));
  }
  return dump(json{{"object", "list"},
                   {"data", std::move(data)},
                   {"model", model_id},
                   {"usage", {{"prompt_tokens", job.n_tokens}, {"total_tokens", job.n_tokens}}}});
}

}  // namespace

// Validates the body, admits the request like a generation (the same --max-queue count, so
// embeddings cannot pile up beside it), then computes in the response's content provider: while
// it waits for the Embedder and between forward steps it writes JSON-insignificant spaces, so a
// client that hung up is noticed and its work abandoned, and shutdown's grace cancels it.
void Server::Impl::handle_embeddings(const httplib::Request& req, httplib::Response& res) {
  require_serving();
  const json body = parse_json_body(req.body);
  if (!body.is_object()) throw invalid_request("the request body must be a JSON object");
  if (auto m = body.find("model"); m != body.end() && m->is_string() && m->get<std::string>() != model_id)
    throw ApiError(404, "invalid_request_error", "The model '" + m->get<std::string>() + "' does not exist", "model",
                   "model_not_found");
  auto in = body.find("input");
  if (in == body.end()) throw invalid_request("'input' is required", "input");
  auto job = parse_embedding_job(*model, body, *in);
  signals::EmbeddingOptions& o = job->o;
  try {
    // Not embed_mu: that is held for a whole computation. Validation only reads the Embedder's
    // fixed shape, so it may run beside one.
    std::lock_guard lk(embedder_make_mu);
    if (!embedder) {
      ContextParams cp;
      cp.n_threads = opt.engine.n_threads;
      embedder = std::make_unique<signals::Embedder>(*model, cp);
    }
    if (o.dimensions > embedder->embedding_dim(o))
      throw invalid_request("'dimensions' is larger than the embedding size " + std::to_string(embedder->embedding_dim(o)),
                            "dimensions");
    embedder->validate(job->inputs, o);
  } catch (const LimitError& e) {
    throw invalid_request(e.what(), "input", "context_length_exceeded");
  } catch (const InputError& e) {
    throw invalid_request(e.what(), "input");
  }

  if (metrics.in_flight.fetch_add(1) + 1 > opt.max_queue) {
    metrics.in_flight.fetch_sub(1);
    throw ApiError(429, "rate_limit_error",
                   "the server is at capacity (" + std::to_string(opt.max_queue) + " requests in flight); retry later", "",
                   "queue_full");
  }
  {
    std::lock_guard lk(live_mu);  // shutdown waits for it, then cancels it, like a generation
    ++live_embeddings;
  }
  metrics.requests_total.fetch_add(1, std::memory_order_relaxed);
  metrics.prompt_tokens.fetch_add(static_cast<uint64_t>(job->n_tokens), std::memory_order_relaxed);
  TenantMetrics* tm = &metrics.tenant(tenant_salt(req));
  tm->requests_total.fetch_add(1, std::memory_order_relaxed);
  tm->prompt_tokens.fetch_add(static_cast<uint64_t>(job->n_tokens), std::memory_order_relaxed);
  auto last_write = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  res.set_chunked_content_provider(
      "application/json",
      [this, job, last_write, tm](size_t, httplib::DataSink& sink) {
        bool hung_up = false;
        // Also the heartbeat: a write to a closed connection fails (the first may not).
        auto stop = [&] {
          if (cancel_embeddings.load(std::memory_order_acquire)) return true;
          const auto now = std::chrono::steady_clock::now();
          if (now - *last_write >= std::chrono::duration<double>(opt.heartbeat_s)) {
            *last_write = now;
            if (!sink.write(" ", 1)) return hung_up = true;
          }
          return false;
        };
        auto fail = [&](const ApiError& e) {
          const std::string b = dump(error_body(e));
          sink.write(b.data(), b.size());
          sink.done();
          return true;
        };
        std::unique_lock lk(embed_mu, std::defer_lock);
        while (!lk.try_lock_for(std::chrono::milliseconds(20)))
          if (stop()) break;
        if (!lk.owns_lock()) {
          metrics.requests_cancelled.fetch_add(1, std::memory_order_relaxed);
          tm->requests_cancelled.fetch_add(1, std::memory_order_relaxed);
          if (hung_up) return false;
          return fail(ApiError(503, "server_error", "the server is shutting down", "", "shutting_down"));
        }
        std::vector<std::vector<float>> vecs;
        try {
          signals::EmbeddingOptions o = job->o;
          o.cancelled = stop;
          vecs = embedder->embed_many(job->inputs, o);
        } catch (const signals::EmbeddingCancelled&) {
          metrics.requests_cancelled.fetch_add(1, std::memory_order_relaxed);
          tm->requests_cancelled.fetch_add(1, std::memory_order_relaxed);
          if (hung_up) return false;
          return fail(ApiError(503, "server_error", "the server is shutting down", "", "shutting_down"));
        } catch (const std::exception& e) {  // validated before: not expected
          metrics.requests_failed.fetch_add(1, std::memory_order_relaxed);
          return fail(ApiError(500, "server_error", std::string("internal error: ") + e.what()));
        }
        lk.unlock();
        const std::string out = render_embeddings(vecs, *job, model_id);
        if (!sink.write(out.data(), out.size())) return false;
        sink.done();
        return true;
      },
      [this](bool) {
        // Always called, also when the client left before the provider ran.
        {
          std::lock_guard lk(live_mu);
          --live_embeddings;
        }
        live_cv.notify_all();
        metrics.in_flight.fetch_sub(1, std::memory_order_relaxed);
      });
}

}  // namespace kvscope::server
