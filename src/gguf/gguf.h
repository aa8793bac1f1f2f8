// GGUF v2/v3 container: a reader over mmap and a writer.
// Spec facts: little-endian; magic "GGUF"; header = version u32, tensor_count u64, kv_count u64;
// metadata values are typed; tensor data starts at an offset aligned to general.alignment (default 32).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kernels/dtype.h"

namespace kvscope::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType t);

struct Value;
struct Array {
  ValueType elem_type = ValueType::UINT8;
  std::vector<Value> items;
};

// One metadata value. Integers are widened to int64/uint64 but the on-disk type is kept so the
// writer round-trips exactly.
struct Value {
  ValueType type = ValueType::UINT8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> v;

  static Value u32(uint32_t x);
  static Value i32(int32_t x);
  static Value u64(uint64_t x);
  static Value f32(float x);
  static Value boolean(bool x);
  static Value str(std::string s);
  static Value str_array(const std::vector<std::string>& xs);
  static Value f32_array(const std::vector<float>& xs);
  static Value i32_array(const std::vector<int32_t>& xs);

  bool is_integer() const;
  int64_t as_int() const;       // throws FormatError when not an integer
  double as_float() const;      // integer or float
  bool as_bool() const;
  const std::string& as_string() const;
  const Array& as_array() const;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // ne[0] is the fastest-varying dimension (row length)
  kernels::DType type = kernels::DType::F32;
  uint64_t offset = 0;      // relative to the data section
  uint64_t nbytes = 0;
  const uint8_t* data = nullptr;  // into the mapping (reader only)
  uint32_t ggml_type = 0;   // the type id as stored (type is only meaningful when problem is empty)
  std::string problem;      // lenient reads only: why kvscope cannot use this tensor ("" when it can)
  int64_t n_elements() const;
};

class File {
 public:
  // Maps and parses; throws FormatError with a message naming the problem.
  static std::unique_ptr<File> open(const std::string& path);
  // As open, but a tensor kvscope cannot use (unsupported or unknown type, a row that is not a
  // whole number of blocks, data past the end of the file) is kept with TensorInfo::problem set
  // instead of failing the whole file: for `kvscope inspect`. Header corruption still throws.
  static std::unique_ptr<File> open_lenient(const std::string& path);
  // Parses an in-memory buffer (used by the fuzzer); the buffer must outlive the File.
  static std::unique_ptr<File> parse(const uint8_t* data, size_t size, const std::string& name = "<memory>",
                                     bool lenient = false);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  uint32_t version() const { return version_; }
  const std::string& path() const { return path_; }
  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  const Value* find(const std::string& key) const;
  const TensorInfo* find_tensor(const std::string& name) const;
  const TensorInfo& tensor(const std::string& name) const;  // throws FormatError "missing tensor X"

  // Typed getters: throw FormatError naming the key when missing (no default) or mistyped.
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& def) const;
  int64_t get_int(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t def) const;
  double get_float(const std::string& key, double def) const;
  bool get_bool(const std::string& key, bool def) const;

  size_t alignment() const { return alignment_; }
  size_t size() const { return size_; }

  // Drops the mapped pages lying wholly inside [p, p + n) from this process's memory (they are
  // read back from the file if touched again): for tensors whose bytes were copied elsewhere.
  void release_pages(const void* p, size_t n) const;

 private:
  File() = default;
  void parse_all();
  static std::unique_ptr<File> map_file(const std::string& path);
  bool lenient_ = false;

  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // non-null when we own an mmap
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

// Writes GGUF v3. Tensors are given as raw bytes already in their on-disk type.
class Writer {
 public:
  void set(const std::string& key, Value v);
  void add_tensor(const std::string& name, std::vector<int64_t> ne, kernels::DType type,
                  std::vector<uint8_t> bytes);
  void write(const std::string& path, size_t alignment = 32) const;
  std::vector<uint8_t> serialize(size_t alignment = 32) const;

 private:
  struct Pending {
    std::string name;
    std::vector<int64_t> ne;
    kernels::DType type;
    std::vector<uint8_t> bytes;
  };
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Pending> tensors_;
};

}  // namespace kvscope::gguf
