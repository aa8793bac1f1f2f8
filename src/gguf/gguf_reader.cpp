// GGUF reader over mmap. Every length and offset read from the file is bounds-checked before use,
// so a truncated or corrupted file gives a FormatError naming what broke, never a crash.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "gguf/gguf.h"
#include "kernels/ggml_types.h"
#include "util/error.h"

namespace kvscope::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kMaxStringLen = 1ull << 30;
constexpr uint64_t kMaxArrayLen = 1ull << 31;
constexpr int kMaxDims = 4;

class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n, const std::string& name) : p_(p), n_(n), name_(name) {}
  size_t pos() const { return off_; }

  void need(uint64_t bytes, const char* what) const {
    if (bytes > n_ - off_)
      throw FormatError(name_ + ": truncated GGUF file (while reading " + what + " at byte " +
                        std::to_string(off_) + ")");
  }
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T x;
    std::memcpy(&x, p_ + off_, sizeof(T));
    off_ += sizeof(T);
    return x;
  }
  std::string read_string(const char* what) {
    uint64_t len = read<uint64_t>(what);
    if (len > kMaxStringLen) throw FormatError(name_ + ": corrupt GGUF: string length " + std::to_string(len) + " in " + what);
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p_ + off_), len);
    off_ += len;
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t off_ = 0;
  const std::string& name_;
};

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::FLOAT64); }

size_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    default: return 0;
  }
}

Value read_value(Cursor& c, ValueType t, const std::string& key, const std::string& name, int depth) {
  Value out;
  out.type = t;
  switch (t) {
    case ValueType::UINT8: out.v = uint64_t{c.read<uint8_t>(key.c_str())}; break;
    case ValueType::INT8: out.v = int64_t{c.read<int8_t>(key.c_str())}; break;
    case ValueType::UINT16: out.v = uint64_t{c.read<uint16_t>(key.c_str())}; break;
    case ValueType::INT16: out.v = int64_t{c.read<int16_t>(key.c_str())}; break;
    case ValueType::UINT32: out.v = uint64_t{c.read<uint32_t>(key.c_str())}; break;
    case ValueType::INT32: out.v = int64_t{c.read<int32_t>(key.c_str())}; break;
    case ValueType::UINT64: out.v = c.read<uint64_t>(key.c_str()); break;
    case ValueType::INT64: out.v = c.read<int64_t>(key.c_str()); break;
    case ValueType::FLOAT32: out.v = double{c.read<float>(key.c_str())}; break;
    case ValueType::FLOAT64: out.v = c.read<double>(key.c_str()); break;
    case ValueType::BOOL: {
      uint8_t b = c.read<uint8_t>(key.c_str());
      if (b > 1) throw FormatError(name + ": corrupt GGUF: bool value " + std::to_string(b) + " for key " + key);
      out.v = b != 0;
      break;
    }
    case ValueType::STRING: out.v = c.read_string(key.c_str()); break;
    case ValueType::ARRAY: {
      if (depth > 2) throw FormatError(name + ": corrupt GGUF: arrays nested too deeply in key " + key);
      uint32_t et = c.read<uint32_t>(key.c_str());
      if (!valid_value_type(et))
        throw FormatError(name + ": corrupt GGUF: unknown array element type " + std::to_string(et) + " in key " + key);
      uint64_t n = c.read<uint64_t>(key.c_str());
      if (n > kMaxArrayLen) throw FormatError(name + ": corrupt GGUF: array length " + std::to_string(n) + " in key " + key);
      // Each element takes at least one byte (strings take 8), so a length beyond the remaining
      // bytes is corrupt; checking now avoids reserving absurd amounts of memory.
      size_t min_elem = et == static_cast<uint32_t>(ValueType::STRING) ? 8 : std::max<size_t>(1, scalar_size(static_cast<ValueType>(et)));
      c.need(n * min_elem, key.c_str());
      Array a{static_cast<ValueType>(et), {}};
      a.items.reserve(n);
      for (uint64_t i = 0; i < n; ++i) a.items.push_back(read_value(c, a.elem_type, key, name, depth + 1));
      out.v = std::move(a);
      break;
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<File> File::open(const std::string& path) {
  auto f = map_file(path);
  f->parse_all();
  return f;
}

std::unique_ptr<File> File::open_lenient(const std::string& path) {
  auto f = map_file(path);
  f->lenient_ = true;
  f->parse_all();
  return f;
}

std::unique_ptr<File> File::map_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw InputError("cannot open model file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError("not a regular file: " + path);
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    throw FormatError(path + ": empty file, not a GGUF model");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) throw InputError("cannot map " + path + ": " + std::strerror(errno));
  std::unique_ptr<File> f(new File());
  f->path_ = path;
  f->map_ = map;
  f->base_ = static_cast<const uint8_t*>(map);
  f->size_ = size;
  return f;
}

std::unique_ptr<File> File::parse(const uint8_t* data, size_t size, const std::string& name, bool lenient) {
  std::unique_ptr<File> f(new File());
  f->lenient_ = lenient;
  f->path_ = name;
  f->base_ = data;
  f->size_ = size;
  f->parse_all();
  return f;
}

void File::release_pages(const void* p, size_t n) const {
  const auto* b = static_cast<const uint8_t*>(p);
  if (!map_ || b < base_ || n > size_ || b - base_ > static_cast<ptrdiff_t>(size_ - n)) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(b) + page - 1) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(b) + n) & ~(page - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

File::~File() {
  if (map_) munmap(map_, size_);
}

void File::parse_all() {
  Cursor c(base_, size_, path_);
  if (size_ < 4 || c.read<uint32_t>("magic") != kMagic) throw FormatError(path_ + ": not a GGUF file (bad magic)");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    throw FormatError(path_ + ": unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
  uint64_t n_tensors = c.read<uint64_t>("tensor count");
  uint64_t n_kv = c.read<uint64_t>("metadata count");
  // Each KV needs >= 13 bytes and each tensor info >= 24, so counts beyond the file are corrupt.
  if (n_kv > size_ / 13 || n_tensors > size_ / 24)
    throw FormatError(path_ + ": corrupt GGUF header (" + std::to_string(n_kv) + " metadata entries, " +
                      std::to_string(n_tensors) + " tensors in a " + std::to_string(size_) + "-byte file)");
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string("metadata key");
    uint32_t t = c.read<uint32_t>("metadata type");
    if (!valid_value_type(t))
      throw FormatError(path_ + ": corrupt GGUF: unknown metadata type " + std::to_string(t) + " for key " + key);
    Value v = read_value(c, static_cast<ValueType>(t), key, path_, 0);
    if (kv_index_.count(key)) throw FormatError(path_ + ": corrupt GGUF: duplicate metadata key " + key);
    kv_index_[key] = kv_.size();
    kv_.emplace_back(std::move(key), std::move(v));
  }
  if (const Value* a = find("general.alignment")) {
    int64_t al = a->is_integer() ? a->as_int() : 0;
    if (al <= 0 || al > (1 << 20) || (al & (al - 1)) != 0)
      throw FormatError(path_ + ": bad general.alignment " + std::to_string(al) + " (must be a power of two)");
    alignment_ = static_cast<size_t>(al);
  }
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo ti;
    ti.name = c.read_string("tensor name");
    uint32_t nd = c.read<uint32_t>("tensor dims");
    if (nd == 0 || nd > kMaxDims)
      throw FormatError(path_ + ": corrupt GGUF: tensor " + ti.name + " has " + std::to_string(nd) + " dimensions");
    int64_t nel = 1;
    for (uint32_t d = 0; d < nd; ++d) {
      uint64_t dim = c.read<uint64_t>("tensor shape");
      if (dim == 0 || dim > (1ull << 40) || static_cast<uint64_t>(nel) > (1ull << 50) / dim)
        throw FormatError(path_ + ": corrupt GGUF: tensor " + ti.name + " has bad dimension " + std::to_string(dim));
      ti.ne.push_back(static_cast<int64_t>(dim));
      nel *= static_cast<int64_t>(dim);
    }
    const uint32_t type = c.read<uint32_t>("tensor type");
    ti.ggml_type = type;
    // A tensor-level problem fails the file, or (lenient reads) is noted on the tensor.
    auto problem = [&](const std::string& what) {
      if (!lenient_) throw FormatError(path_ + ": tensor " + ti.name + ": " + what);
      if (ti.problem.empty()) ti.problem = what;
    };
    int64_t bs = 0;
    uint64_t bb = 0;
    try {
      ti.type = kernels::dtype_from_ggml(type);
      bs = kernels::block_size(ti.type);
      bb = kernels::block_bytes(ti.type);
    } catch (const FormatError& e) {
      problem(e.what());
      if (const kernels::GgmlTypeInfo* gi = kernels::ggml_type_info(type)) bs = gi->block, bb = gi->block_bytes;
    }
    ti.offset = c.read<uint64_t>("tensor offset");
    if (bs > 0 && ti.ne[0] % bs != 0) {
      problem("row length " + std::to_string(ti.ne[0]) + " is not a multiple of the " + kernels::ggml_type_name(type) +
              " block size " + std::to_string(bs));
      bs = 0;
    }
    ti.nbytes = bs > 0 ? static_cast<uint64_t>(ti.ne[0] / bs) * bb * static_cast<uint64_t>(nel / ti.ne[0]) : 0;
    if (tensor_index_.count(ti.name)) throw FormatError(path_ + ": corrupt GGUF: duplicate tensor " + ti.name);
    tensor_index_[ti.name] = tensors_.size();
    tensors_.push_back(std::move(ti));
  }
  size_t data_start = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (!lenient_ && n_tensors > 0 && data_start > size_) throw FormatError(path_ + ": truncated GGUF file (no tensor data)");
  for (auto& t : tensors_) {
    auto problem = [&](const std::string& what) {
      if (!lenient_) throw FormatError(path_ + ": " + what);
      if (t.problem.empty()) t.problem = what;
    };
    if (t.offset % alignment_ != 0) {
      problem("corrupt GGUF: tensor " + t.name + " offset " + std::to_string(t.offset) + " is not aligned");
    } else if (data_start > size_ || t.offset > size_ - data_start || t.nbytes > size_ - data_start - t.offset) {
      problem("truncated GGUF file: tensor " + t.name + " data (" + std::to_string(t.nbytes) + " bytes at offset " +
              std::to_string(t.offset) + ") extends past the end of the file");
    } else {
      t.data = base_ + data_start + t.offset;
    }
  }
}

const Value* File::find(const std::string& key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* File::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::tensor(const std::string& name) const {
  const TensorInfo* t = find_tensor(name);
  if (!t) throw FormatError(path_ + ": missing tensor " + name);
  return *t;
}

namespace {
template <typename F>
auto typed(const File& f, const std::string& key, const Value& v, F&& get) -> decltype(get(v)) {
  try {
    return get(v);
  } catch (const FormatError& e) {
    throw FormatError(f.path() + ": metadata " + key + ": " + e.what());
  }
}
}  // namespace

std::string File::get_string(const std::string& key) const {
  const Value* v = find(key);
  if (!v) throw FormatError(path_ + ": missing metadata key " + key);
  return typed(*this, key, *v, [](const Value& x) { return x.as_string(); });
}
std::string File::get_string(const std::string& key, const std::string& def) const {
  const Value* v = find(key);
  return v ? typed(*this, key, *v, [](const Value& x) { return x.as_string(); }) : def;
}
int64_t File::get_int(const std::string& key) const {
  const Value* v = find(key);
  if (!v) throw FormatError(path_ + ": missing metadata key " + key);
  return typed(*this, key, *v, [](const Value& x) { return x.as_int(); });
}
int64_t File::get_int(const std::string& key, int64_t def) const {
  const Value* v = find(key);
  return v ? typed(*this, key, *v, [](const Value& x) { return x.as_int(); }) : def;
}
double File::get_float(const std::string& key, double def) const {
  const Value* v = find(key);
  return v ? typed(*this, key, *v, [](const Value& x) { return x.as_float(); }) : def;
}
bool File::get_bool(const std::string& key, bool def) const {
  const Value* v = find(key);
  return v ? typed(*this, key, *v, [](const Value& x) { return x.as_bool(); }) : def;
}

}  // namespace kvscope::gguf
