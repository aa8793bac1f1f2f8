// Metadata values: constructors and checked accessors.
#include "gguf/gguf.h"
#include "util/error.h"

namespace kvscope::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
  }
  return "?";
}

Value Value::u32(uint32_t x) { return Value{ValueType::UINT32, uint64_t{x}}; }
Value Value::i32(int32_t x) { return Value{ValueType::INT32, int64_t{x}}; }
Value Value::u64(uint64_t x) { return Value{ValueType::UINT64, x}; }
Value Value::f32(float x) { return Value{ValueType::FLOAT32, double{x}}; }
Value Value::boolean(bool x) { return Value{ValueType::BOOL, x}; }
Value Value::str(std::string s) { return Value{ValueType::STRING, std::move(s)}; }

Value Value::str_array(const std::vector<std::string>& xs) {
  Array a{ValueType::STRING, {}};
  a.items.reserve(xs.size());
  for (const auto& s : xs) a.items.push_back(str(s));
  return Value{ValueType::ARRAY, std::move(a)};
}
Value Value::f32_array(const std::vector<float>& xs) {
  Array a{ValueType::FLOAT32, {}};
  a.items.reserve(xs.size());
  for (float x : xs) a.items.push_back(f32(x));
  return Value{ValueType::ARRAY, std::move(a)};
}
Value Value::i32_array(const std::vector<int32_t>& xs) {
  Array a{ValueType::INT32, {}};
  a.items.reserve(xs.size());
  for (int32_t x : xs) a.items.push_back(i32(x));
  return Value{ValueType::ARRAY, std::move(a)};
}

bool Value::is_integer() const {
  return std::holds_alternative<uint64_t>(v) || std::holds_alternative<int64_t>(v);
}

int64_t Value::as_int() const {
  if (auto p = std::get_if<uint64_t>(&v)) return static_cast<int64_t>(*p);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  if (auto p = std::get_if<bool>(&v)) return *p ? 1 : 0;
  throw FormatError(std::string("expected an integer, found ") + value_type_name(type));
}

double Value::as_float() const {
  if (auto p = std::get_if<double>(&v)) return *p;
  if (is_integer()) return static_cast<double>(as_int());
  throw FormatError(std::string("expected a number, found ") + value_type_name(type));
}

bool Value::as_bool() const {
  if (auto p = std::get_if<bool>(&v)) return *p;
  if (is_integer()) return as_int() != 0;
  throw FormatError(std::string("expected a bool, found ") + value_type_name(type));
}

const std::string& Value::as_string() const {
  if (auto p = std::get_if<std::string>(&v)) return *p;
  throw FormatError(std::string("expected a string, found ") + value_type_name(type));
}

const Array& Value::as_array() const {
  if (auto p = std::get_if<Array>(&v)) return *p;
  throw FormatError(std::string("expected an array, found ") + value_type_name(type));
}

int64_t TensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

}  // namespace kvscope::gguf
