#include "engine/session_file.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "util/error.h"
#include "util/hash.h"

namespace kvscope {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'S', 'E', 'S', 'S', 0};

struct Writer {
  std::vector<uint8_t> b;
  template <class T>
  void put(T v) {
    // resize + memcpy: GCC 12 misreads vector::insert of a small object here (-Wstringop-overflow).
    const size_t at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
  }
};

struct Reader {
  const std::vector<uint8_t>& b;
  size_t off = 0;
  template <class T>
  T get() {
    if (off + sizeof(T) > b.size()) throw InputError("session file truncated");
    T v;
    std::memcpy(&v, b.data() + off, sizeof v);
    off += sizeof v;
    return v;
  }
};

}  // namespace

void save_session_file(const std::string& path, uint64_t fingerprint, const PagedKVCache& kv, const BlockTable& table,
                       const std::vector<int32_t>& tokens) {
  const int n_blocks = (static_cast<int>(tokens.size()) + kv.block_size() - 1) / kv.block_size();
  if (n_blocks > table.n_blocks()) throw InputError("session: fewer blocks than tokens");
  Writer w;
  w.b.insert(w.b.end(), kMagic, kMagic + 8);
  w.put(kSessionFileVersion);
  w.put(fingerprint);
  w.put(static_cast<uint32_t>(kv.block_size()));
  w.put(static_cast<uint32_t>(kv.n_layer()));
  w.put(static_cast<uint32_t>(kv.kv_dim()));
  for (int l = 0; l < kv.n_layer(); ++l) {
    w.put(static_cast<uint32_t>(kv.k_type(l)));
    w.put(static_cast<uint32_t>(kv.v_type(l)));
  }
  w.put(static_cast<uint32_t>(tokens.size()));
  for (int32_t t : tokens) w.put(t);
  w.put(static_cast<uint32_t>(n_blocks));
  const size_t bb = kv.block_bytes();
  for (int i = 0; i < n_blocks; ++i) {
    const size_t at = w.b.size();
    w.b.resize(at + bb);
    kv.export_block(table.blocks()[i], w.b.data() + at);
  }
  for (int i = 0; i < n_blocks; ++i) {
    const auto st = kv.export_staging(table.blocks()[i]);
    w.put(static_cast<uint32_t>(st.size()));
    w.b.insert(w.b.end(), st.begin(), st.end());
  }
  w.put(util::fnv1a(w.b.data(), w.b.size()));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw InputError("cannot write session file " + path);
  f.write(reinterpret_cast<const char*>(w.b.data()), static_cast<std::streamsize>(w.b.size()));
  if (!f) throw InputError("cannot write session file " + path);
}

std::vector<int32_t> load_session_file(const std::string& path, uint64_t fingerprint, PagedKVCache& kv, BlockTable& table) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot open session file " + path);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < 8 + 4 + 8 || std::memcmp(b.data(), kMagic, 8) != 0) throw InputError("not a kvscope session file: " + path);
  uint64_t stored;
  std::memcpy(&stored, b.data() + b.size() - 8, 8);
  if (util::fnv1a(b.data(), b.size() - 8) != stored) throw InputError("session file damaged (checksum mismatch): " + path);
  Reader r{b, 8};
  const auto version = r.get<uint32_t>();
  if (version != kSessionFileVersion)
    throw InputError("session file version " + std::to_string(version) + " not supported (expected " +
                     std::to_string(kSessionFileVersion) + ")");
  if (r.get<uint64_t>() != fingerprint) throw InputError("session file was made with a different model: " + path);
  if (r.get<uint32_t>() != static_cast<uint32_t>(kv.block_size()) || r.get<uint32_t>() != static_cast<uint32_t>(kv.n_layer()) ||
      r.get<uint32_t>() != static_cast<uint32_t>(kv.kv_dim()))
    throw InputError("session file KV layout does not match this engine (block size / layers / width)");
  for (int l = 0; l < kv.n_layer(); ++l) {
    const auto k = r.get<uint32_t>(), v = r.get<uint32_t>();
    if (k != static_cast<uint32_t>(kv.k_type(l)) || v != static_cast<uint32_t>(kv.v_type(l))) {
      auto name = [](uint32_t t) { return t < kKVTypeCount ? kv_type_name(static_cast<KVType>(t)) : "?"; };
      throw InputError("session file KV element types (layer " + std::to_string(l) + ": k=" + name(k) + " v=" + name(v) +
                       ") do not match this engine's (k=" + kv_type_name(kv.k_type(l)) + " v=" +
                       kv_type_name(kv.v_type(l)) + "); use the same --cache-type-k/--cache-type-v/--kv-layer-types");
    }
  }
  const auto n_tok = r.get<uint32_t>();
  if (n_tok > (b.size() / 4)) throw InputError("session file truncated");
  std::vector<int32_t> tokens(n_tok);
  for (auto& t : tokens) t = r.get<int32_t>();
  const auto n_blocks = r.get<uint32_t>();
  const size_t bb = kv.block_bytes();
  if (n_blocks != (n_tok + kv.block_size() - 1) / kv.block_size() || r.off + n_blocks * (bb + 4) + 8 > b.size())
    throw InputError("session file damaged (block count)");
  const size_t blocks_at = r.off;
  r.off += n_blocks * bb;
  std::vector<std::pair<size_t, size_t>> staging(n_blocks);  // offset, length
  for (auto& [at, len] : staging) {
    len = r.get<uint32_t>();
    at = r.off;
    if (r.off + len + 8 > b.size()) throw InputError("session file damaged (staging)");
    r.off += len;
  }
  if (r.off + 8 != b.size()) throw InputError("session file damaged (trailing bytes)");
  if (!table.prepare(kv, 0, static_cast<int>(n_tok))) throw LimitError("KV pool too small to restore the session");
  try {
    for (uint32_t i = 0; i < n_blocks; ++i) {
      kv.import_block(table.blocks()[i], b.data() + blocks_at + i * bb);
      kv.import_staging(table.blocks()[i], b.data() + staging[i].first, staging[i].second);
    }
  } catch (...) {
    table.release_all(kv.pool());
    throw;
  }
  return tokens;
}

}  // namespace kvscope
