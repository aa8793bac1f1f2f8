#include "toolcall/parser.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <utility>

#include "util/error.h"
#include "util/rng.h"

namespace kvscope::toolcall {

using ojson = nlohmann::ordered_json;

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

// Length of the longest end of `s` that is a proper start of `marker`: text that may still become it.
size_t partial_marker(std::string_view s, std::string_view marker) {
  for (size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == marker.substr(0, n)) return n;
  return 0;
}

// Where `s` matches a sequence of tokens with optional whitespace before each, from `pos`.
enum class Match : uint8_t { Yes, Partial, No };
Match match_tokens(std::string_view s, size_t pos, std::initializer_list<std::string_view> tokens, size_t* end) {
  for (std::string_view t : tokens) {
    while (pos < s.size() && is_ws(s[pos])) ++pos;
    const size_t n = std::min(t.size(), s.size() - pos);
    if (s.substr(pos, n) != t.substr(0, n)) return Match::No;
    if (n < t.size()) return Match::Partial;
    pos += n;
  }
  if (end) *end = pos;
  return Match::Yes;
}

// Follows one JSON value's bytes (any value, nested) to find where it ends; does not validate beyond
// the brackets and strings that decide the end.
class ValueScan {
 public:
  enum class R : uint8_t { More, Done, DoneBefore };  // DoneBefore: a number/literal ended before this byte
  R push(char c) {
    if (!started_) {
      started_ = true;
      if (c == '"') {
        str_ = true;
        return R::More;
      }
      if (c == '{' || c == '[') {
        nest_ = 1;
        return R::More;
      }
      scalar_ = true;
      return R::More;
    }
    if (str_) {
      if (esc_) esc_ = false;
      else if (c == '\\') esc_ = true;
      else if (c == '"') {
        str_ = false;
        if (nest_ == 0) return R::Done;
      }
      return R::More;
    }
    if (scalar_) return (c == ',' || c == '}' || c == ']' || is_ws(c)) ? R::DoneBefore : R::More;
    if (c == '"') str_ = true;
    else if (c == '{' || c == '[') ++nest_;
    else if ((c == '}' || c == ']') && --nest_ == 0) return R::Done;
    return R::More;
  }
  bool is_string() const { return string_value_; }
  void begin(char c) { string_value_ = c == '"'; }

 private:
  bool started_ = false, str_ = false, esc_ = false, scalar_ = false, string_value_ = false;
  int nest_ = 0;
};

std::string decode_string(const std::string& raw, bool* ok) {
  try {
    const ojson v = ojson::parse(raw);
    *ok = v.is_string();
    return *ok ? v.get<std::string>() : raw;
  } catch (const ojson::exception&) {
    *ok = false;
    return raw;
  }
}

// One call's JSON object, read byte by byte: its name (key "name"), its arguments (key "arguments" or
// "parameters"; streamed as they come when they are an object, decoded at the end when the model
// wrote them as a JSON string), other keys skipped.
class CallObject {
 public:
  enum class R : uint8_t { More, Done, Bad };
  R push(char c) {
    raw += c;
    for (;;) {
      switch (st_) {
        case St::Open:
          if (is_ws(c)) return R::More;
          if (c != '{') return R::Bad;
          st_ = St::KeyOrEnd;
          return R::More;
        case St::KeyOrEnd:
        case St::Key:
          if (is_ws(c)) return R::More;
          if (c == '}' && st_ == St::KeyOrEnd) return end();
          if (c != '"') return R::Bad;
          key_.clear();
          st_ = St::InKey;
          return R::More;
        case St::InKey:
          if (esc_) {
            esc_ = false;
            key_ += c;
          } else if (c == '\\') {
            esc_ = true;
          } else if (c == '"') {
            st_ = St::Colon;
          } else {
            key_ += c;
          }
          return R::More;
        case St::Colon:
          if (is_ws(c)) return R::More;
          if (c != ':') return R::Bad;
          st_ = St::ValueStart;
          return R::More;
        case St::ValueStart:
          if (is_ws(c)) return R::More;
          field_ = key_ == "name" ? F::Name : (key_ == "arguments" || key_ == "parameters") ? F::Args : F::Other;
          scan_ = ValueScan();
          scan_.begin(c);
          vraw_.clear();
          st_ = St::Value;
          continue;  // c is the value's first byte
        case St::Value: {
          const auto r = scan_.push(c);
          if (r == ValueScan::R::DoneBefore) {
            value_end();
            st_ = St::AfterValue;
            continue;  // c follows the value
          }
          vraw_ += c;
          if (field_ == F::Args && !scan_.is_string()) args_new += c;
          if (r == ValueScan::R::Done) {
            value_end();
            st_ = St::AfterValue;
          }
          return R::More;
        }
        case St::AfterValue:
          if (is_ws(c)) return R::More;
          if (c == ',') {
            st_ = St::Key;
            return R::More;
          }
          if (c == '}') return end();
          return R::Bad;
        case St::Done: return R::Bad;
      }
    }
  }
  // At the end of the text: a value that only a following byte would end (a number) ends here.
  void flush() {
    if (st_ == St::Value && !scan_.is_string()) value_end();
  }
  bool have_name = false;
  std::string name;
  bool have_args = false;
  std::string args_new;  // argument text not taken yet
  std::string raw;       // every byte pushed

 private:
  enum class St : uint8_t { Open, KeyOrEnd, Key, InKey, Colon, ValueStart, Value, AfterValue, Done };
  enum class F : uint8_t { Name, Args, Other };
  R end() {
    st_ = St::Done;
    return R::Done;
  }
  void value_end() {
    if (field_ == F::Name) {
      bool ok = false;
      std::string n = decode_string(vraw_, &ok);
      if (ok && !have_name) {
        name = std::move(n);
        have_name = true;
      }
    } else if (field_ == F::Args) {
      have_args = true;
      if (scan_.is_string()) {  // stringified arguments: the JSON inside is the arguments
        bool ok = false;
        args_new = decode_string(vraw_, &ok);
      }
    }
    field_ = F::Other;
  }
  St st_ = St::Open;
  F field_ = F::Other;
  bool esc_ = false;
  std::string key_, vraw_;
  ValueScan scan_;
};

}  // namespace

// ---- the base: content, calls, deltas ----

ToolCallParser::ToolCallParser(ToolFormat f, IdMaker ids) : format_(f), ids_(std::move(ids)) {
  if (!ids_) {
    static std::atomic<uint64_t> counter{0};
    const uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                          (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    ids_ = [seed](ToolFormat fmt, int index) { return random_call_id(fmt, seed + static_cast<uint64_t>(index) * 7919); };
  }
}

ParseDelta ToolCallParser::feed(std::string_view text) {
  buf_.append(text);
  run(false);
  return std::exchange(out_, ParseDelta{});
}

ParseDelta ToolCallParser::finish() {
  run(true);
  if (!buf_.empty()) emit_content(std::exchange(buf_, std::string()));
  if (calls_.empty() && !held_ws_.empty()) {
    out_.content += held_ws_;
    content_ += held_ws_;
  }
  held_ws_.clear();
  return std::exchange(out_, ParseDelta{});
}

void ToolCallParser::emit_content(std::string_view s) {
  // Trailing whitespace waits for more text: whitespace around calls is not content.
  size_t keep = s.size();
  while (keep > 0 && is_ws(s[keep - 1])) --keep;
  if (keep == 0) {
    held_ws_.append(s);
    return;
  }
  std::string text = std::exchange(held_ws_, std::string());
  if (calls_.empty() && content_.empty()) text.clear();  // leading whitespace of the answer
  text.append(s.substr(0, keep));
  held_ws_.assign(s.substr(keep));
  if (content_.empty()) {
    const size_t b = text.find_first_not_of(" \n\r\t");
    text.erase(0, b);
  }
  out_.content += text;
  content_ += text;
}

int ToolCallParser::begin_call(std::string name, std::string id) {
  held_ws_.clear();
  const int index = static_cast<int>(calls_.size());
  if (id.empty()) id = ids_(format_, index);
  calls_.push_back(ToolCall{id, name, ""});
  out_.calls.push_back(ToolCallDelta{index, std::move(id), std::move(name), ""});
  return index;
}

void ToolCallParser::emit_arguments(std::string_view s) {
  if (s.empty() || calls_.empty()) return;
  const int index = static_cast<int>(calls_.size()) - 1;
  calls_.back().arguments.append(s);
  if (out_.calls.empty() || out_.calls.back().index != index) out_.calls.push_back(ToolCallDelta{index, "", "", ""});
  out_.calls.back().arguments.append(s);
}

std::string random_call_id(ToolFormat f, uint64_t seed) {
  static const char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  util::SplitMix64 r{seed};
  const bool mistral = f == ToolFormat::Mistral;
  std::string id = mistral ? "" : "call_";
  for (int i = 0; i < (mistral ? 9 : 24); ++i) id += kAlnum[r.next() % 62];
  return id;
}

namespace {

// Shared by the families: one call object being read, its name and arguments passed on as they come.
class CallReader {
 public:
  // Feeds buf from pos; returns the position after the bytes consumed. Sets done/bad.
  size_t feed(const std::string& buf, size_t pos, const std::function<int(std::string)>& begin,
              const std::function<void(std::string_view)>& args) {
    for (; pos < buf.size() && !done && !bad; ++pos) {
      const auto r = obj.push(buf[pos]);
      if (r == CallObject::R::Bad) {
        bad = true;
        return pos + 1;
      }
      if (r == CallObject::R::Done) done = true;
      pass(begin, args);
    }
    return pos;
  }
  void pass(const std::function<int(std::string)>& begin, const std::function<void(std::string_view)>& args) {
    if (obj.have_name && !begun) {
      begin(obj.name);
      begun = true;
    }
    if (begun && !obj.args_new.empty()) {
      args(obj.args_new);
      obj.args_new.clear();
      wrote_args = true;
    }
    if (done && begun && !wrote_args) {
      args("{}");
      wrote_args = true;
    }
  }
  CallObject obj;
  bool done = false, bad = false, begun = false, wrote_args = false;
};

// Hermes / Qwen: <tool_call>{json}</tool_call>, anywhere in the answer.
class HermesParser final : public ToolCallParser {
 public:
  explicit HermesParser(IdMaker ids) : ToolCallParser(ToolFormat::Hermes, std::move(ids)) {}
  std::unique_ptr<ToolCallParser> clone() const override { return std::make_unique<HermesParser>(*this); }
  bool naming() const override { return (st_ == St::Content && !buf_.empty()) || (st_ == St::Call && !call_.begun); }

 private:
  static constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";
  enum class St : uint8_t { Content, Call, Close } st_ = St::Content;
  CallReader call_;
  std::string raw_;  // the marker and call text read, shown as content if the call proves not to be one

  void run(bool at_end) override {
    auto begin = [this](std::string n) { return begin_call(std::move(n)); };
    auto args = [this](std::string_view s) { emit_arguments(s); };
    for (;;) {
      if (st_ == St::Content) {
        const size_t at = buf_.find(kOpen);
        if (at == std::string::npos) {
          const size_t hold = at_end ? 0 : partial_marker(buf_, kOpen);
          emit_content(std::string_view(buf_).substr(0, buf_.size() - hold));
          buf_.erase(0, buf_.size() - hold);
          return;
        }
        emit_content(std::string_view(buf_).substr(0, at));
        buf_.erase(0, at + kOpen.size());
        raw_ = kOpen;
        call_ = CallReader();
        st_ = St::Call;
      }
      if (st_ == St::Call) {
        const size_t used = call_.feed(buf_, 0, begin, args);
        raw_.append(buf_, 0, used);
        buf_.erase(0, used);
        if (call_.bad && !call_.begun) {  // not a call after all: the text is content
          emit_content(raw_);
          st_ = St::Content;
          continue;
        }
        if (call_.bad || call_.done) {
          st_ = St::Close;
          continue;
        }
        if (at_end) {
          call_.obj.flush();
          call_.pass(begin, args);
          if (!call_.begun) emit_content(raw_);
          return;
        }
        return;
      }
      // Close: whitespace, then </tool_call> (a model that leaves it out goes on with content).
      size_t end = 0;
      const Match m = match_tokens(buf_, 0, {kClose}, &end);
      if (m == Match::Partial && !at_end) return;
      if (m == Match::Yes) buf_.erase(0, end);
      st_ = St::Content;
      if (m == Match::Partial) buf_.clear();
    }
  }
};

// Llama 3.x: the answer is {"name": ..., "parameters": ...} (calls separated by ';'), or a call
// after <|python_tag|>. Text that does not open that way is content to the end.
class Llama3Parser final : public ToolCallParser {
 public:
  explicit Llama3Parser(IdMaker ids) : ToolCallParser(ToolFormat::Llama3, std::move(ids)) {}
  std::unique_ptr<ToolCallParser> clone() const override { return std::make_unique<Llama3Parser>(*this); }
  bool naming() const override { return st_ == St::Start || st_ == St::Between || (st_ == St::Call && !call_.begun); }

 private:
  static constexpr std::string_view kTag = "<|python_tag|>";
  enum class St : uint8_t { Start, Call, Between, Content } st_ = St::Start;
  CallReader call_;
  std::string raw_;

  void run(bool at_end) override {
    auto begin = [this](std::string n) { return begin_call(std::move(n)); };
    auto args = [this](std::string_view s) { emit_arguments(s); };
    for (;;) {
      switch (st_) {
        case St::Start:
        case St::Between: {
          size_t p = 0;
          while (p < buf_.size() && is_ws(buf_[p])) ++p;
          if (buf_.compare(p, kTag.size(), kTag) == 0) {
            buf_.erase(0, p + kTag.size());
            continue;
          }
          if (st_ == St::Between && p < buf_.size() && buf_[p] == ';') {
            buf_.erase(0, p + 1);
            continue;
          }
          const Match a = match_tokens(buf_, 0, {"{", "\"name\""}, nullptr);
          const Match b = match_tokens(buf_, 0, {"{", "\"type\"", ":", "\"function\"", ",", "\"name\""}, nullptr);
          const bool tag_partial = p < buf_.size() && buf_.size() - p < kTag.size() &&
                                   kTag.substr(0, buf_.size() - p) == std::string_view(buf_).substr(p);
          if (a == Match::Yes || b == Match::Yes) {
            raw_.clear();
            call_ = CallReader();
            st_ = St::Call;
            continue;
          }
          if (!at_end && (p == buf_.size() || a == Match::Partial || b == Match::Partial || tag_partial)) return;
          st_ = St::Content;
          continue;
        }
        case St::Call: {
          const size_t used = call_.feed(buf_, 0, begin, args);
          raw_.append(buf_, 0, used);
          buf_.erase(0, used);
          if (call_.bad && !call_.begun) {
            emit_content(raw_);
            st_ = St::Content;
            continue;
          }
          if (call_.bad || call_.done) {
            st_ = St::Between;
            continue;
          }
          if (at_end) {
            call_.obj.flush();
            call_.pass(begin, args);
            if (!call_.begun) emit_content(raw_);
          }
          return;
        }
        case St::Content:
          emit_content(buf_);
          buf_.clear();
          return;
      }
    }
  }
};

// Mistral: [TOOL_CALLS] then a JSON array of calls (v0.3, Nemo), or name[ARGS]{arguments} (v11
// tokenizers: Mistral Small 3.2, Devstral). Either may follow content.
class MistralParser final : public ToolCallParser {
 public:
  explicit MistralParser(IdMaker ids) : ToolCallParser(ToolFormat::Mistral, std::move(ids)) {}
  std::unique_ptr<ToolCallParser> clone() const override { return std::make_unique<MistralParser>(*this); }
  bool naming() const override {
    return (st_ == St::Content && !buf_.empty()) || st_ == St::Open || st_ == St::ArrayItem || st_ == St::ArrayNext ||
           st_ == St::Name || (st_ == St::ArrayCall && !call_.begun);
  }

 private:
  static constexpr std::string_view kOpen = "[TOOL_CALLS]", kArgs = "[ARGS]";
  enum class St : uint8_t { Content, Open, ArrayItem, ArrayCall, ArrayNext, Name, Args } st_ = St::Content;
  CallReader call_;
  ValueScan args_;
  bool args_started_ = false;
  std::string raw_, name_;

  void back_to_content() {
    emit_content(raw_);
    st_ = St::Content;
  }

  void run(bool at_end) override {
    auto begin = [this](std::string n) { return begin_call(std::move(n)); };
    auto args = [this](std::string_view s) { emit_arguments(s); };
    for (;;) {
      switch (st_) {
        case St::Content: {
          const size_t at = buf_.find(kOpen);
          if (at == std::string::npos) {
            const size_t hold = at_end ? 0 : partial_marker(buf_, kOpen);
            emit_content(std::string_view(buf_).substr(0, buf_.size() - hold));
            buf_.erase(0, buf_.size() - hold);
            return;
          }
          emit_content(std::string_view(buf_).substr(0, at));
          buf_.erase(0, at + kOpen.size());
          raw_ = kOpen;
          st_ = St::Open;
          continue;
        }
        case St::Open: {
          size_t p = 0;
          while (p < buf_.size() && is_ws(buf_[p])) ++p;
          if (p == buf_.size()) {
            if (at_end) return back_to_content();
            return;
          }
          raw_.append(buf_, 0, p + (buf_[p] == '[' ? 1 : 0));
          if (buf_[p] == '[') {
            buf_.erase(0, p + 1);
            st_ = St::ArrayItem;
          } else {
            buf_.erase(0, p);
            name_.clear();
            st_ = St::Name;
          }
          continue;
        }
        case St::ArrayItem:
        case St::ArrayNext: {
          size_t p = 0;
          while (p < buf_.size() && is_ws(buf_[p])) ++p;
          if (p == buf_.size()) {
            if (!at_end) return;
            if (calls().empty()) back_to_content();
            return;
          }
          const char c = buf_[p];
          raw_.append(buf_, 0, p + 1);
          buf_.erase(0, p + 1);
          if (st_ == St::ArrayNext && c == ',') {
            st_ = St::ArrayItem;
          } else if (c == ']') {
            st_ = St::Content;
          } else if (st_ == St::ArrayItem && c == '{') {
            call_ = CallReader();
            call_.obj.push('{');
            st_ = St::ArrayCall;
          } else {
            buf_.insert(0, 1, c);
            raw_.pop_back();
            st_ = St::Content;
            if (calls().empty()) back_to_content();
          }
          continue;
        }
        case St::ArrayCall: {
          const size_t used = call_.feed(buf_, 0, begin, args);
          raw_.append(buf_, 0, used);
          buf_.erase(0, used);
          if (call_.bad && !call_.begun) {
            back_to_content();
            continue;
          }
          if (call_.bad || call_.done) {
            st_ = St::ArrayNext;
            continue;
          }
          if (at_end) {
            call_.obj.flush();
            call_.pass(begin, args);
            if (!call_.begun) back_to_content();
          }
          return;
        }
        case St::Name: {
          const size_t at = buf_.find(kArgs);
          const size_t n = at != std::string::npos ? at : buf_.size() - partial_marker(buf_, kArgs);
          for (size_t i = 0; i < n; ++i) {
            const char c = buf_[i];
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
              raw_ += buf_.substr(0, i);
              buf_.erase(0, i);
              back_to_content();
              goto next;
            }
          }
          if (at == std::string::npos) {
            if (at_end || buf_.size() > 128) {
              raw_ += buf_;
              buf_.clear();
              back_to_content();
            }
            return;
          }
          name_ = buf_.substr(0, at);
          raw_ += buf_.substr(0, at + kArgs.size());
          buf_.erase(0, at + kArgs.size());
          if (name_.empty()) {
            back_to_content();
            continue;
          }
          begin_call(name_);
          args_ = ValueScan();
          args_started_ = false;
          st_ = St::Args;
          continue;
        }
        case St::Args: {
          size_t i = 0;
          bool done = false;
          for (; i < buf_.size() && !done; ++i) {
            if (!args_started_) {
              if (is_ws(buf_[i])) continue;
              args_started_ = true;
              args_.begin(buf_[i]);
            }
            const auto r = args_.push(buf_[i]);
            if (r == ValueScan::R::DoneBefore) {
              done = true;
              break;
            }
            emit_arguments(std::string_view(buf_).substr(i, 1));
            if (r == ValueScan::R::Done) done = true;
          }
          buf_.erase(0, i);
          if (done) {
            st_ = St::Content;
            continue;
          }
          if (at_end && !args_started_) emit_arguments("{}");
          return;
        }
      }
    next:;
    }
  }
};

// Generic: the whole answer is one JSON object naming the call(s), or a response.
class GenericParser final : public ToolCallParser {
 public:
  explicit GenericParser(IdMaker ids) : ToolCallParser(ToolFormat::Generic, std::move(ids)) {}
  std::unique_ptr<ToolCallParser> clone() const override { return std::make_unique<GenericParser>(*this); }
  bool naming() const override {
    return st_ == St::Start || st_ == St::Item || st_ == St::Next || (st_ == St::Call && !call_.begun);
  }

 private:
  enum class St : uint8_t { Start, Item, Call, Next, Close, Response, Content } st_ = St::Start;
  CallReader call_;
  ValueScan resp_;
  bool resp_started_ = false, array_ = false;
  bool wrapped_ = false;  // the calls sit inside {"tool_calls": ...} / {"tool_call": ...} / {"response": ...}
  std::string raw_;

  void run(bool at_end) override {
    auto begin = [this](std::string n) { return begin_call(std::move(n)); };
    auto args = [this](std::string_view s) { emit_arguments(s); };
    for (;;) {
      switch (st_) {
        case St::Start: {
          size_t end = 0;
          const Match many = match_tokens(buf_, 0, {"{", "\"tool_calls\"", ":", "["}, &end);
          if (many == Match::Yes) {
            raw_ = buf_.substr(0, end);
            buf_.erase(0, end);
            array_ = wrapped_ = true;
            st_ = St::Item;
            continue;
          }
          size_t end1 = 0;
          const Match one = match_tokens(buf_, 0, {"{", "\"tool_call\"", ":"}, &end1);
          if (one == Match::Yes) {
            raw_ = buf_.substr(0, end1);
            buf_.erase(0, end1);
            call_ = CallReader();
            wrapped_ = true;
            st_ = St::Call;
            continue;
          }
          const Match bare = match_tokens(buf_, 0, {"{", "\"name\""}, nullptr);
          if (bare == Match::Yes) {
            raw_.clear();
            call_ = CallReader();
            st_ = St::Call;
            array_ = wrapped_ = false;
            continue;
          }
          size_t end2 = 0;
          const Match resp = match_tokens(buf_, 0, {"{", "\"response\"", ":"}, &end2);
          if (resp == Match::Yes) {
            raw_ = buf_.substr(0, end2);
            buf_.erase(0, end2);
            wrapped_ = true;
            st_ = St::Response;
            continue;
          }
          const bool blank = buf_.find_first_not_of(" \n\r\t") == std::string::npos;
          if (!at_end && (blank || many == Match::Partial || one == Match::Partial || bare == Match::Partial ||
                          resp == Match::Partial))
            return;
          st_ = St::Content;
          continue;
        }
        case St::Item:
        case St::Next: {
          size_t p = 0;
          while (p < buf_.size() && is_ws(buf_[p])) ++p;
          if (p == buf_.size()) {
            if (at_end && calls().empty()) {
              emit_content(raw_);
              st_ = St::Content;
            }
            return;
          }
          const char c = buf_[p];
          if (st_ == St::Next && c == ',') {
            raw_.append(buf_, 0, p + 1);
            buf_.erase(0, p + 1);
            st_ = St::Item;
          } else if (c == ']') {
            raw_.append(buf_, 0, p + 1);
            buf_.erase(0, p + 1);
            array_ = false;
            st_ = St::Close;
          } else if (st_ == St::Item && c == '{') {
            buf_.erase(0, p);
            call_ = CallReader();
            st_ = St::Call;
          } else {
            if (calls().empty()) emit_content(raw_);
            st_ = St::Content;
          }
          continue;
        }
        case St::Call: {
          const size_t used = call_.feed(buf_, 0, begin, args);
          raw_.append(buf_, 0, used);
          buf_.erase(0, used);
          if (call_.bad && !call_.begun) {
            emit_content(raw_);
            st_ = St::Content;
            continue;
          }
          if (call_.bad || call_.done) {
            st_ = array_ ? St::Next : St::Close;
            continue;
          }
          if (at_end) {
            call_.obj.flush();
            call_.pass(begin, args);
            if (!call_.begun) emit_content(raw_);
          }
          return;
        }
        case St::Close: {  // the wrapper's closing brace (a bare call has none left)
          size_t end = 0;
          if (!wrapped_) {
            st_ = St::Content;
            continue;
          }
          const Match m = match_tokens(buf_, 0, {"}"}, &end);
          if (m == Match::Partial && !at_end) return;
          if (m == Match::Yes) buf_.erase(0, end);
          raw_.clear();
          st_ = St::Content;
          continue;
        }
        case St::Response: {
          // {"response": "text"}: the string's text is the content, given when the string is whole.
          size_t i = 0;
          bool done = false;
          for (; i < buf_.size() && !done; ++i) {
            if (!resp_started_) {
              if (is_ws(buf_[i])) {
                raw_ += buf_[i];
                continue;
              }
              resp_started_ = true;
              resp_.begin(buf_[i]);
            }
            raw_ += buf_[i];
            if (resp_.push(buf_[i]) != ValueScan::R::More) done = true;
          }
          buf_.erase(0, i);
          if (done) {
            const size_t colon = raw_.find(':');
            std::string value = raw_.substr(colon + 1);
            bool ok = false;
            std::string text = decode_string(value.substr(value.find('"')), &ok);
            emit_content(ok ? text : raw_);
            st_ = St::Close;
            continue;
          }
          if (at_end) {
            emit_content(raw_);
            st_ = St::Content;
            continue;
          }
          return;
        }
        case St::Content:
          emit_content(buf_);
          buf_.clear();
          return;
      }
    }
  }
};

// $defs of one tool's parameters, moved under "<tool>.<name>" so that several tools fit one document.
void move_defs(ojson& s, const std::string& tool, ojson& defs) {
  if (s.is_object()) {
    for (const char* k : {"$defs", "definitions"}) {
      if (!s.contains(k) || !s[k].is_object()) continue;
      for (auto& [name, d] : s[k].items()) defs[tool + "." + name] = d;
      s.erase(k);
    }
    for (auto& [key, v] : s.items()) {
      if (key == "$ref" && v.is_string()) {
        const std::string r = v.get<std::string>();
        for (const std::string base : {"#/$defs/", "#/definitions/"})
          if (r.rfind(base, 0) == 0) v = "#/$defs/" + tool + "." + r.substr(base.size());
      } else if (key != "const" && key != "enum" && key != "default" && key != "examples") {
        move_defs(v, tool, defs);
      }
    }
  } else if (s.is_array()) {
    for (auto& v : s) move_defs(v, tool, defs);
  }
}

}  // namespace

ToolFormat detect_tool_format(const std::string& t) {
  if (has(t, "<tool_call>")) return ToolFormat::Hermes;
  if (has(t, "[TOOL_CALLS]")) return ToolFormat::Mistral;
  if (has(t, "<|start_header_id|>") && (has(t, "\"parameters\"") || has(t, "<|python_tag|>") || has(t, "ipython")))
    return ToolFormat::Llama3;
  return ToolFormat::Generic;
}

ToolFormat tool_format_from_name(const std::string& n) {
  if (n == "hermes" || n == "qwen" || n == "qwen2.5" || n == "qwen3") return ToolFormat::Hermes;
  if (n == "llama3" || n == "llama3.1" || n == "llama3.2") return ToolFormat::Llama3;
  if (n == "mistral") return ToolFormat::Mistral;
  if (n == "generic") return ToolFormat::Generic;
  throw InputError("unknown tool-call format '" + n + "' (known: hermes, llama3, mistral, generic)");
}

const char* tool_format_name(ToolFormat f) {
  switch (f) {
    case ToolFormat::Hermes: return "hermes";
    case ToolFormat::Llama3: return "llama3";
    case ToolFormat::Mistral: return "mistral";
    case ToolFormat::Generic: return "generic";
  }
  return "?";
}

std::unique_ptr<ToolCallParser> make_tool_call_parser(ToolFormat f, IdMaker ids) {
  switch (f) {
    case ToolFormat::Hermes: return std::make_unique<HermesParser>(std::move(ids));
    case ToolFormat::Llama3: return std::make_unique<Llama3Parser>(std::move(ids));
    case ToolFormat::Mistral: return std::make_unique<MistralParser>(std::move(ids));
    case ToolFormat::Generic: return std::make_unique<GenericParser>(std::move(ids));
  }
  return nullptr;
}

ForcedCall forced_call(const ToolSpec& spec, ToolFormat f) {
  if (!spec.forced()) throw InputError("forced_call: tool_choice is neither 'required' nor a function");
  ojson defs = ojson::object();
  const char* args_key = f == ToolFormat::Llama3 ? "parameters" : "arguments";
  // One call of one tool: {"name": <const>, <args_key>: <its parameters>}, name first.
  auto call_of = [&](const FunctionTool& t) {
    ojson params = t.parameters;
    move_defs(params, t.name, defs);
    ojson props = ojson::object();
    props["name"] = ojson{{"const", t.name}};
    props[args_key] = params;
    return ojson{{"type", "object"}, {"properties", props}, {"required", ojson::array({"name", args_key})}};
  };
  ojson call;
  if (spec.choice == ChoiceKind::Function) {
    call = call_of(*spec.find(spec.choice_name));
  } else if (spec.tools.size() == 1) {
    call = call_of(spec.tools[0]);
  } else {
    ojson alts = ojson::array();
    for (const auto& t : spec.tools) alts.push_back(call_of(t));
    call = ojson{{"anyOf", alts}};
  }
  ForcedCall fc;
  auto array_of = [&](const ojson& item) {
    ojson a{{"type", "array"}, {"items", item}, {"minItems", 1}};
    if (!spec.parallel || spec.choice == ChoiceKind::Function) a["maxItems"] = 1;
    return a;
  };
  switch (f) {
    case ToolFormat::Hermes:
      fc.prefix = "<tool_call>\n";
      fc.schema = call;
      fc.suffix = "\n</tool_call>";
      break;
    case ToolFormat::Llama3:
      fc.schema = call;
      break;
    case ToolFormat::Mistral:
      fc.prefix = "[TOOL_CALLS]";
      fc.schema = array_of(call);
      break;
    case ToolFormat::Generic: {
      ojson props = ojson::object();
      props["tool_calls"] = array_of(call);
      fc.schema = ojson{{"type", "object"}, {"properties", props}, {"required", ojson::array({"tool_calls"})}};
      break;
    }
  }
  if (!defs.empty()) fc.schema["$defs"] = defs;
  return fc;
}

}  // namespace kvscope::toolcall
