// POST /v1/responses (OpenAI's Responses API) on the chat pipeline: the request becomes a chat
// job, and the job's events (serving/events.h) become a response object or the Responses stream
// events. Stored responses give previous_response_id and GET/DELETE.
#pragma once
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/protocol.h"
#include "toolcall/parser.h"

namespace kvscope::server {

// One stored response: what GET returns and the conversation a follow-up continues.
struct StoredResponse {
  uint64_t tenant = 0;
  json response;
  json conversation = json::array();  // chat messages up to and including this answer (no instructions)
  std::string session;                // the kvscope session the chain's KV is pinned under
};

// Bounded store (the oldest response is dropped first); a tenant sees only its own responses.
class ResponseStore {
 public:
  explicit ResponseStore(size_t capacity = 1024) : capacity_(capacity) {}
  std::optional<StoredResponse> get(uint64_t tenant, const std::string& id) const;
  void put(const std::string& id, StoredResponse r);
  std::optional<StoredResponse> erase(uint64_t tenant, const std::string& id);
  // Whether a stored response of the tenant still continues the session (its KV stays pinned).
  bool uses_session(uint64_t tenant, const std::string& session) const;
  size_t size() const;

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::string> order_;  // oldest first
  std::unordered_map<std::string, std::pair<StoredResponse, std::list<std::string>::iterator>> map_;
};

// A Responses request turned into a chat completions one.
struct ResponsesCall {
  // The chat completions request body, in the client's order where order carries meaning (a
  // schema's properties are generated in the order they are written).
  nlohmann::ordered_json chat;
  json conversation = json::array();  // previous turns + this turn's input (chat messages, no instructions)
  std::string id;                     // resp_...
  std::string previous_id;
  std::string session;
  json instructions, max_output_tokens, effort, metadata;  // echoed in the response object (null when absent)
  // reasoning.summary ("auto", "concise", "detailed"; null: none asked): the reasoning text is then
  // also the reasoning item's summary, whole and streamed, where clients such as the AI SDK read it.
  json summary;
  json tools = json::array(), tool_choice = "auto";       // echoed as the client sent them
  bool parallel_tool_calls = true;
  json text_format = {{"type", "text"}};                   // text.format as the client sent it
  double temperature = 1, top_p = 1;
  bool stream = false, store = true;
};

// Validates the body (throws ApiError naming the Responses parameter) and builds the chat request;
// the body in its written order (schemas, tool parameters) is carried into the chat request as is.
ResponsesCall parse_responses_request(const nlohmann::ordered_json& body, const ResponseStore& store, uint64_t tenant);
inline ResponsesCall parse_responses_request(const json& body, const ResponseStore& store, uint64_t tenant) {
  return parse_responses_request(nlohmann::ordered_json(body), store, tenant);
}

// Maps a chat request's ApiError onto the Responses parameter names (max_tokens -> max_output_tokens ...).
ApiError responses_error(const ApiError& e);

// Builds the response object from the events of the chat job it runs (serving/events.h), whole or
// streamed.
class ResponsesWriter {
 public:
  ResponsesWriter(ResponsesCall call, std::string model, int64_t created);

  // Non-stream: the job's answer (reasoning "" when none) -> the response object. ext: the kvscope
  // extension object (null: none).
  // calls: the tool calls the answer made (null: none), as function_call items after the message.
  json from_result(const std::string& reasoning, const std::string& text, FinishReason reason, const Usage& usage,
                   const json& ext, const std::vector<toolcall::ToolCall>* calls = nullptr);

  // Stream: response.created and response.in_progress.
  std::string start();
  // One event of the job -> the SSE text of the Responses events it causes; ext: the kvscope
  // extension object, read with Finished.
  std::string on_event(const serving::Event& ev, const json& ext);
  // After the job's Finished: closes the open items, then response.completed (or .incomplete).
  std::string finish();

  const json& response() const { return response_; }
  // The conversation a follow-up continues: the call's plus this answer.
  json conversation() const;
  const ResponsesCall& call() const { return call_; }

 private:
  json base(const std::string& status) const;
  json& complete();  // the final response object, from the items and usage gathered
  std::string event(const std::string& type, json fields);
  std::string open_reasoning();
  std::string close_reasoning();
  std::string open_message();
  std::string close_message();
  void set_usage(const Usage& usage, const json& ext);
  // A function_call output item: its item id, the call's id, name and arguments so far.
  struct Call {
    std::string item_id, call_id, name, arguments;
    int output_index = 0;
    bool open = false;
  };
  static json call_item(const Call& c, const char* status);
  std::string close_calls();
  bool summarize() const { return !call_.summary.is_null(); }
  json reasoning_item(const char* status) const;
  std::vector<Call> calls_;

  ResponsesCall call_;
  std::string model_;
  int64_t created_;
  std::string msg_id_, rs_id_;
  int seq_ = 0;
  // Stream state: which items are open and at which output index.
  int rs_index_ = -1, msg_index_ = -1, n_items_ = 0;
  bool rs_open_ = false, msg_open_ = false;
  std::string reasoning_, text_;
  FinishReason finish_reason_ = FinishReason::Stop;
  json usage_ = nullptr, ext_ = nullptr, output_ = json::array();
  json response_;
};

}  // namespace kvscope::server
