// Weight re-layout for the AVX-512 VNNI kernels (see pack_weight in kernels.h and the layout
// comment in internal.h). Done once at model load, in scalar code, so it has no ISA of its own.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "kernels/internal.h"
#include "kernels/kernels.h"

namespace kvscope::kernels {

void PackedStore::Free::operator()(uint8_t* p) const { std::free(p); }

uint8_t* PackedStore::alloc(size_t bytes) {
  const size_t n = (bytes + 63) & ~size_t{63};
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, n ? n : 64));
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, n);
  bufs_.emplace_back(p);
  bytes_ += n;
  return p;
}

namespace detail {
bool packed_kernels_available() {
  static const bool ok = [] {
    if (detected_isa() != Isa::AVX512) return false;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512vnni")) return false;
    const char* e = std::getenv("KVSCOPE_REPACK");
    return !(e && std::string(e) == "0");
  }();
  return ok;
}
}  // namespace detail

bool pack_weight(WeightRef& w, PackedStore& store) {
  if ((w.type != DType::Q8_0 && w.type != DType::Q4_0) || !w.data || w.rows <= 0 || w.cols <= 0) return false;
  if (!detail::packed_kernels_available()) return false;
  const bool q4 = w.type == DType::Q4_0;
  const int64_t nb = w.cols / 32;
  const int64_t groups = (w.rows + detail::kPackRows - 1) / detail::kPackRows;
  const size_t gbytes = detail::packed_group_bytes(w.type, nb);
  const size_t qb = detail::packed_quant_bytes(w.type);
  const size_t bb = block_bytes(w.type);
  const size_t rb = row_bytes(w.type, w.cols);
  uint8_t* out = store.alloc(gbytes * static_cast<size_t>(groups));
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* gq = out + static_cast<size_t>(g) * gbytes;
    uint8_t* gs = gq + static_cast<size_t>(nb) * qb;
    for (int r = 0; r < detail::kPackRows; ++r) {
      const int64_t n = g * detail::kPackRows + r;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* q = gq + static_cast<size_t>(b) * qb + 4 * r;
        if (n >= w.rows) {  // padding row: code for 0 (Q8_0 stores q + 128), scale 0
          if (!q4)
            for (int s = 0; s < 8; ++s) std::memset(q + 64 * s, 128, 4);
          continue;
        }
        const uint8_t* blk = src + static_cast<size_t>(n) * rb + static_cast<size_t>(b) * bb;
        std::memcpy(gs + (static_cast<size_t>(b) * detail::kPackRows + r) * 2, blk, 2);
        const int steps = q4 ? 4 : 8;
        for (int s = 0; s < steps; ++s)
          for (int i = 0; i < 4; ++i)
            q[64 * s + i] = q4 ? blk[2 + 4 * s + i] : static_cast<uint8_t>(blk[2 + 4 * s + i] ^ 0x80);
      }
    }
  }
  w.packed = out;
  return true;
}

}  // namespace kvscope::kernels
