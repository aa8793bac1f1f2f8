#include "engine/session_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/hash.h"
#include "util/sha256.h"

namespace kvscope {
namespace {

constexpr char kMagic[8] = {'K', 'V', 'S', 'S', 'E', 'S', 'S', 0};
constexpr size_t kTagBytes = 32;

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
  size_t end;  // the checksum's offset: fields never run into it
  size_t off = 0;
  template <class T>
  T get() {
    if (off + sizeof(T) > end) throw InputError("session file truncated");
    T v;
    std::memcpy(&v, b.data() + off, sizeof v);
    off += sizeof v;
    return v;
  }
};

std::string sys_error() { return std::strerror(errno); }

}  // namespace

std::vector<uint8_t> encode_session(uint64_t fingerprint, const PagedKVCache& kv, const BlockTable& table,
                                    const std::vector<int32_t>& tokens, const std::string& secret) {
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
  const auto tag = util::hmac_sha256(secret, w.b.data(), w.b.size());
  w.b.insert(w.b.end(), tag.begin(), tag.end());
  return std::move(w.b);
}

SessionImage decode_session(std::vector<uint8_t> bytes, uint64_t fingerprint, const PagedKVCache& kv,
                            const std::string& secret) {
  SessionImage img;
  img.bytes = std::move(bytes);
  const auto& b = img.bytes;
  if (b.size() < 8 + 4 || std::memcmp(b.data(), kMagic, 8) != 0) throw InputError("not a kvscope session file");
  uint32_t version;
  std::memcpy(&version, b.data() + 8, 4);
  if (version != kSessionFileVersion)
    throw InputError("session file version " + std::to_string(version) + " not supported (expected " +
                     std::to_string(kSessionFileVersion) + "; save the session again with this version)");
  if (b.size() < 8 + 4 + 8 + kTagBytes) throw InputError("session file damaged (checksum mismatch: truncated)");
  // The checksum tells damage from forgery; the tag, which needs the secret, is what is trusted.
  const size_t sum_at = b.size() - kTagBytes - 8;
  uint64_t stored;
  std::memcpy(&stored, b.data() + sum_at, 8);
  if (util::fnv1a(b.data(), sum_at) != stored) throw InputError("session file damaged (checksum mismatch)");
  const auto tag = util::hmac_sha256(secret, b.data(), sum_at + 8);
  if (!util::digest_equal(tag.data(), b.data() + sum_at + 8, kTagBytes))
    throw InputError("session file signature does not match this server's session secret (written by another server, or edited)");
  Reader r{b, sum_at, 12};
  if (r.get<uint64_t>() != fingerprint) throw InputError("session file was made with a different model");
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
  if (n_tok > sum_at / 4) throw InputError("session file truncated");
  img.tokens.resize(n_tok);
  for (auto& t : img.tokens) t = r.get<int32_t>();
  const auto n_blocks = r.get<uint32_t>();
  const size_t bb = kv.block_bytes();
  if (n_blocks != (n_tok + kv.block_size() - 1) / kv.block_size() || r.off + n_blocks * (bb + 4) > sum_at)
    throw InputError("session file damaged (block count)");
  img.blocks_at = r.off;
  r.off += n_blocks * bb;
  img.staging.resize(n_blocks);
  for (auto& [at, len] : img.staging) {
    len = r.get<uint32_t>();
    at = r.off;
    if (r.off + len > sum_at) throw InputError("session file damaged (staging)");
    r.off += len;
  }
  if (r.off != sum_at) throw InputError("session file damaged (trailing bytes)");
  return img;
}

void install_session(const SessionImage& img, PagedKVCache& kv, BlockTable& table) {
  const int n_tok = static_cast<int>(img.tokens.size());
  if (!table.prepare(kv, 0, n_tok)) throw LimitError("KV pool too small to restore the session");
  const size_t bb = kv.block_bytes();
  try {
    for (size_t i = 0; i < img.staging.size(); ++i) {
      kv.import_block(table.blocks()[i], img.bytes.data() + img.blocks_at + i * bb);
      kv.import_staging(table.blocks()[i], img.bytes.data() + img.staging[i].first, img.staging[i].second);
    }
  } catch (...) {
    table.release_all(kv.pool());
    throw;
  }
}

void write_session_bytes(const std::string& path, const std::vector<uint8_t>& bytes, bool exclusive) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) throw InputError("cannot create the session file: " + sys_error());
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? sys_error() : "no progress";
      ::close(fd);
      throw InputError("cannot write the session file: " + why);
    }
    off += static_cast<size_t>(n);
  }
  // Durable before the caller renames it into place: a crash leaves the old file or the new one.
  if (::fsync(fd) != 0) {
    const std::string why = sys_error();
    ::close(fd);
    throw InputError("cannot write the session file: " + why);
  }
  if (::close(fd) != 0) throw InputError("cannot write the session file: " + sys_error());
}

std::optional<std::vector<uint8_t>> read_session_bytes(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the file itself, not a link.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP) throw InputError("the session file is a symbolic link (only regular files are read)");
    throw InputError("cannot open the session file: " + sys_error());
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError("cannot read the session file: " + sys_error());
  if (!S_ISREG(st.st_mode)) throw InputError("the session file is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    throw InputError("the session file is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                     std::to_string(max_bytes) + " bytes (serve --session-max-mib)");
  std::vector<uint8_t> b(static_cast<size_t>(st.st_size));
  size_t off = 0;
  while (off < b.size()) {
    const ssize_t n = ::read(fd, b.data() + off, b.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot read the session file: " + sys_error());
    if (n == 0) break;  // shrank while read: the checks below see a short file
    off += static_cast<size_t>(n);
  }
  b.resize(off);
  return b;
}

void save_session_file(const std::string& path, uint64_t fingerprint, const PagedKVCache& kv, const BlockTable& table,
                       const std::vector<int32_t>& tokens, const std::string& secret) {
  write_session_bytes(path, encode_session(fingerprint, kv, table, tokens, secret));
}

std::vector<int32_t> load_session_file(const std::string& path, uint64_t fingerprint, PagedKVCache& kv, BlockTable& table,
                                       const std::string& secret) {
  auto bytes = read_session_bytes(path, kDefaultSessionMaxBytes);
  if (!bytes) throw InputError("session file not found");
  const SessionImage img = decode_session(std::move(*bytes), fingerprint, kv, secret);
  install_session(img, kv, table);
  return img.tokens;
}

}  // namespace kvscope
