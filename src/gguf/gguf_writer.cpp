// GGUF v3 writer: metadata in insertion order, tensor data aligned.
#include <cstring>
#include <fstream>

#include "gguf/gguf.h"
#include "util/error.h"

namespace kvscope::gguf {
namespace {

class Out {
 public:
  std::vector<uint8_t> buf;
  template <typename T>
  void put(T x) {
    size_t n = buf.size();
    buf.resize(n + sizeof(T));
    std::memcpy(buf.data() + n, &x, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    buf.insert(buf.end(), s.begin(), s.end());
  }
  void pad_to(size_t alignment) {
    while (buf.size() % alignment) buf.push_back(0);
  }
};

void put_value(Out& o, const Value& v) {
  switch (v.type) {
    case ValueType::UINT8: o.put<uint8_t>(static_cast<uint8_t>(v.as_int())); break;
    case ValueType::INT8: o.put<int8_t>(static_cast<int8_t>(v.as_int())); break;
    case ValueType::UINT16: o.put<uint16_t>(static_cast<uint16_t>(v.as_int())); break;
    case ValueType::INT16: o.put<int16_t>(static_cast<int16_t>(v.as_int())); break;
    case ValueType::UINT32: o.put<uint32_t>(static_cast<uint32_t>(v.as_int())); break;
    case ValueType::INT32: o.put<int32_t>(static_cast<int32_t>(v.as_int())); break;
    case ValueType::UINT64: o.put<uint64_t>(static_cast<uint64_t>(v.as_int())); break;
    case ValueType::INT64: o.put<int64_t>(v.as_int()); break;
    case ValueType::FLOAT32: o.put<float>(static_cast<float>(v.as_float())); break;
    case ValueType::FLOAT64: o.put<double>(v.as_float()); break;
    case ValueType::BOOL: o.put<uint8_t>(v.as_bool() ? 1 : 0); break;
    case ValueType::STRING: o.put_string(v.as_string()); break;
    case ValueType::ARRAY: {
      const Array& a = v.as_array();
      o.put<uint32_t>(static_cast<uint32_t>(a.elem_type));
      o.put<uint64_t>(a.items.size());
      for (const auto& it : a.items) put_value(o, it);
      break;
    }
  }
}

}  // namespace

void Writer::set(const std::string& key, Value v) {
  for (auto& kv : kv_)
    if (kv.first == key) {
      kv.second = std::move(v);
      return;
    }
  kv_.emplace_back(key, std::move(v));
}

void Writer::add_tensor(const std::string& name, std::vector<int64_t> ne, kernels::DType type,
                        std::vector<uint8_t> bytes) {
  int64_t nel = 1;
  for (int64_t d : ne) nel *= d;
  if (ne.empty() || ne[0] % kernels::block_size(type) != 0)
    throw InputError("tensor " + name + ": row length must be a multiple of the block size");
  size_t expect = kernels::row_bytes(type, ne[0]) * static_cast<size_t>(nel / ne[0]);
  if (bytes.size() != expect)
    throw InputError("tensor " + name + ": " + std::to_string(bytes.size()) + " bytes given, " +
                     std::to_string(expect) + " expected");
  tensors_.push_back({name, std::move(ne), type, std::move(bytes)});
}

std::vector<uint8_t> Writer::serialize(size_t alignment) const {
  Out o;
  o.put<uint32_t>(0x46554747);
  o.put<uint32_t>(3);
  o.put<uint64_t>(tensors_.size());
  bool has_alignment = false;
  for (const auto& kv : kv_) has_alignment |= kv.first == "general.alignment";
  o.put<uint64_t>(kv_.size() + (alignment != 32 && !has_alignment ? 1 : 0));
  for (const auto& kv : kv_) {
    o.put_string(kv.first);
    o.put<uint32_t>(static_cast<uint32_t>(kv.second.type));
    put_value(o, kv.second);
  }
  if (alignment != 32 && !has_alignment) {
    o.put_string("general.alignment");
    o.put<uint32_t>(static_cast<uint32_t>(ValueType::UINT32));
    o.put<uint32_t>(static_cast<uint32_t>(alignment));
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    o.put_string(t.name);
    o.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) o.put<uint64_t>(static_cast<uint64_t>(d));
    o.put<uint32_t>(static_cast<uint32_t>(t.type));
    o.put<uint64_t>(offset);
    offset += (t.bytes.size() + alignment - 1) / alignment * alignment;
  }
  o.pad_to(alignment);
  for (const auto& t : tensors_) {
    o.buf.insert(o.buf.end(), t.bytes.begin(), t.bytes.end());
    o.pad_to(alignment);
  }
  return std::move(o.buf);
}

void Writer::write(const std::string& path, size_t alignment) const {
  std::vector<uint8_t> bytes = serialize(alignment);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw InputError("cannot write " + path);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw InputError("error writing " + path);
}

}  // namespace kvscope::gguf
