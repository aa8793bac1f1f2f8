// Request bodies as JSON: every route's body goes through parse_json_body, which bounds nesting and
// names the field of an out-of-range number before any JSON value is built.
#include <string>
#include <vector>

#include "server/server_impl.h"
#include "tokenizer/tokenizer.h"

namespace kvscope::server {

namespace {

// A first pass over a request body that builds nothing: it refuses nesting beyond kMaxJsonDepth
// before any value exists (copying, dumping and comparing JSON recurse once per level; 150 KB of
// brackets overflowed the stack), and keeps the path of keys so an error can name its field.
// (nlohmann's parser callback could bound depth too, but its DOM builder rescans the parent
// container at every closing bracket: quadratic in a flat array of objects.)
struct BodyScan {
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  std::vector<std::string> path;  // per open container: its current key ("" in an array)
  std::string error, code, param;

  std::string field() const {
    std::string f;
    for (const auto& k : path)
      if (!k.empty()) f += (f.empty() ? "" : ".") + k;
    return f;
  }
  bool open() {
    if (path.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      error = "the JSON body is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      code = "json_too_deep";
      param = field();
      return false;
    }
    path.emplace_back();
    return true;
  }
  bool close() {
    path.pop_back();
    return true;
  }
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(number_integer_t) { return true; }
  bool number_unsigned(number_unsigned_t) { return true; }
  bool number_float(number_float_t, const string_t&) { return true; }
  bool string(string_t&) { return true; }
  bool binary(binary_t&) { return true; }
  bool start_object(std::size_t) { return open(); }
  bool key(string_t& k) {
    path.back() = k;
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    if (e.id == 406) {  // a number beyond a double's range (1e309)
      param = field();
      error = (param.empty() ? std::string("a number in the JSON body") : "'" + param + "'") +
              " is out of range (larger than a double can hold)";
      code = "invalid_value";
    } else {
      error = std::string("We could not parse the JSON body of your request: ") + e.what();
      code = "invalid_json";
    }
    return false;
  }
};

}  // namespace

json parse_json_body(const std::string& body) {
  // Checked before parsing so the message says what is wrong; nothing invalid reaches the tokenizer.
  if (!tok::is_valid_utf8(body)) throw invalid_request("the request body is not valid UTF-8", "", "invalid_encoding");
  BodyScan scan;
  if (!json::sax_parse(body, &scan)) throw invalid_request(scan.error, scan.param, scan.code);
  try {
    return json::parse(body);
  } catch (const json::exception& e) {  // not expected once the scan passed
    throw invalid_request(std::string("We could not parse the JSON body of your request: ") + e.what(), "", "invalid_json");
  }
}

}  // namespace kvscope::server
