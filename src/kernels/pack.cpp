// Weight re-layout for the AVX-512 VNNI kernels (see pack_weight in kernels.h and the layout
// comment in internal.h). Done once at model load, in scalar code, so it has no ISA of its own;
// the 16-row groups of a matrix are independent, so they are split over the load's thread pool.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>

#include "kernels/internal.h"
#include "kernels/kernels.h"
#include "kernels/kquant.h"
#include "kernels/legacy_quant.h"
#include "util/env.h"

namespace kvscope::kernels {

void PackedStore::Free::operator()(uint8_t* p) const { std::free(p); }

uint8_t* PackedStore::alloc(size_t bytes, bool zero) {
  // Matrices are carved out of 2 MiB-aligned arenas that are asked to be backed by transparent
  // huge pages: decode streams every weight once per token, and with 4 KiB pages every 4 KiB of
  // it costs a TLB miss. Arena space not handed out is never touched, so it costs no memory.
  constexpr size_t kHuge = size_t{2} << 20, kArena = size_t{32} << 20;
  const size_t n = (bytes + 63) & ~size_t{63};
  if (bufs_.empty() || arena_used_ + n > arena_size_) {
    const size_t sz = (std::max(n, kArena) + kHuge - 1) & ~(kHuge - 1);
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(kHuge, sz));
    if (!p) throw std::bad_alloc();
    madvise(p, sz, MADV_HUGEPAGE);  // advice only: without huge pages everything still works
    bufs_.emplace_back(p);
    arena_size_ = sz;
    arena_used_ = 0;
  }
  uint8_t* p = bufs_.back().get() + arena_used_;
  arena_used_ += n;
  if (zero) std::memset(p, 0, n);
  bytes_ += n;
  return p;
}

namespace detail {
bool packed_kernels_available(DType t) {
  static const bool repack = util::env_flag("KVSCOPE_REPACK", true);
  const bool avx512 = repack && detected_isa() == Isa::AVX512;
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) return avx512;
  // The quantized layouts have AVX-512 VNNI kernels and AVX2 ones (two 8-row halves per vector),
  // so AVX2-only CPUs and AVX-512 ones without VNNI pack them too.
  return (kqp_type(t) || packed32_type(t)) && repack && static_cast<int>(detected_isa()) >= static_cast<int>(Isa::AVX2);
}
bool bf16_pair_layout() {
  static const bool v = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return v;
}
}  // namespace detail

namespace {

// Calls fn(g0, g1) on disjoint ranges covering [0, groups), over the pool when one is given. The
// ranges are handed out in small chunks rather than one half per thread: much of the cost is the
// kernel clearing fresh (huge) pages on first touch, which lands unevenly on the threads.
void over_groups(int64_t groups, ThreadPool* pool, const std::function<void(int64_t, int64_t)>& fn) {
  if (groups <= 0) return;
  if (!pool || pool->size() == 1 || groups == 1) return fn(0, groups);
  const int64_t chunk = std::max<int64_t>(1, groups / (8 * pool->size()));
  std::atomic<int64_t> next{0};
  pool->run([&](int, int) {
    for (int64_t g0; (g0 = next.fetch_add(chunk, std::memory_order_relaxed)) < groups;) fn(g0, std::min(groups, g0 + chunk));
  });
}

// BF16 for vdpbf16ps: each 32-bit lane holds two consecutive columns of one row (layout in internal.h).
bool pack_bf16_pairs(WeightRef& w, PackedStore& store, ThreadPool* pool) {
  constexpr int R = detail::kPackRows;
  const int64_t K = w.cols, kp = (K + 1) / 2, groups = (w.rows + R - 1) / R;
  const size_t gbytes = static_cast<size_t>(kp * R) * 4;
  uint8_t* out = store.alloc(gbytes * static_cast<size_t>(groups), false);
  const auto* src = static_cast<const uint8_t*>(w.data);
  over_groups(groups, pool, [&](int64_t g0, int64_t g1) {
    std::memset(out + static_cast<size_t>(g0) * gbytes, 0, static_cast<size_t>(g1 - g0) * gbytes);  // padding rows, odd tail
    for (int64_t n = g0 * R; n < std::min(w.rows, g1 * R); ++n) {
      auto* g = reinterpret_cast<uint16_t*>(out + static_cast<size_t>(n / R) * gbytes) + static_cast<size_t>(n % R) * 2;
      const uint8_t* row = src + static_cast<size_t>(n * K) * 2;
      for (int64_t k = 0; k < K; ++k) std::memcpy(g + static_cast<size_t>((k / 2) * R) * 2 + k % 2, row + 2 * k, 2);
    }
  });
  w.packed = out;
  return true;
}

// F32/F16/BF16: element (n, k) goes to group n/16, column k, lane n%16 (elements keep their bytes).
bool pack_float(WeightRef& w, PackedStore& store, ThreadPool* pool) {
  constexpr int R = detail::kPackRows;
  const size_t eb = w.type == DType::F32 ? 4 : 2;
  const int64_t K = w.cols, groups = (w.rows + R - 1) / R;
  const size_t gbytes = static_cast<size_t>(K * R) * eb;
  uint8_t* out = store.alloc(gbytes * static_cast<size_t>(groups), false);
  const auto* src = static_cast<const uint8_t*>(w.data);
  over_groups(groups, pool, [&](int64_t g0, int64_t g1) {
    std::memset(out + static_cast<size_t>(g0) * gbytes, 0, static_cast<size_t>(g1 - g0) * gbytes);
    for (int64_t n = g0 * R; n < std::min(w.rows, g1 * R); ++n) {
      uint8_t* g = out + static_cast<size_t>(n / R) * gbytes + static_cast<size_t>(n % R) * eb;
      const uint8_t* row = src + static_cast<size_t>(n * K) * eb;
      for (int64_t k = 0; k < K; ++k) std::memcpy(g + static_cast<size_t>(k * R) * eb, row + k * eb, eb);
    }
  });
  w.packed = out;
  return true;
}

// K-quants / IQ4_XS: each row's blocks are decoded to unsigned codes and integer scales (the
// reference decoders, so the packed kernel multiplies exactly the integers the reference does) and
// scattered into the group layout of KqPackGeom (internal.h).
void pack_kq_row(const detail::KqPackGeom& G, DType t, const uint8_t* row, int64_t nb, int r, uint8_t* gp) {
  const size_t BB = detail::kqp_block_bytes(G);
  const size_t CS = detail::kqp_chunk_bytes(G), CO = detail::kqp_code_offset(G), HI = detail::kqp_hi_offset(G), SO = detail::kqp_scale_offset(G), MO = detail::kqp_min_offset(G),
               DO = detail::kqp_d_offset(G);
  const size_t bb = block_bytes(t);
  uint8_t u[256];
  int s[16], mn[16];
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = row + static_cast<size_t>(b) * bb;
    uint8_t* bp = gp + static_cast<size_t>(b) * BB;
    uint16_t D = 0, Dmin = 0;
    if (G.lut) {  // IQ4_XS: sub-block j's bytes 16j.. hold elements 32j+l (low nibble), 32j+16+l (high)
      const uint8_t* qs = blk + offsetof(BlockIQ4_XS, qs);
      for (int j = 0; j < 8; ++j) {
        for (int l = 0; l < 16; ++l) {
          u[32 * j + l] = qs[16 * j + l] & 15;
          u[32 * j + 16 + l] = qs[16 * j + l] >> 4;
        }
        s[j] = legacy::iq4xs_scale(blk, j);
      }
      std::memcpy(&D, blk, 2);
    } else {
      kquant::block_codes(t, blk, u);
      kquant::BlockScales S;
      kquant::block_scales(t, blk, S);
      const int step = 16 / G.ns;  // Q4_K/Q5_K's BlockScales repeat each 32-element scale twice
      for (int j = 0; j < G.ns; ++j) {
        s[j] = S.s[step * j];
        mn[j] = S.m[step * j];
      }
      D = fp32_to_fp16(S.D);
      Dmin = fp32_to_fp16(S.Dmin);
    }
    for (int c = 0; c < 8; ++c) {
      const uint8_t* uc = u + 32 * c;
      uint8_t* cp = bp + CO + CS * static_cast<size_t>(c);
      for (int i = 0; i < 4; ++i) {
        if (G.lo_bits == 4) {
          for (int q = 0; q < 4; ++q)
            cp[64 * q + 4 * r + i] = static_cast<uint8_t>((uc[4 * q + i] & 15) | ((uc[16 + 4 * q + i] & 15) << 4));
        } else {
          for (int v = 0; v < 2; ++v) {
            int byte = 0;
            for (int k = 0; k < 4; ++k) byte |= (uc[16 * v + 4 * k + i] & 3) << (2 * k);
            cp[64 * v + 4 * r + i] = static_cast<uint8_t>(byte);
          }
        }
        if (G.hi_bits == 1) {
          int byte = 0;
          for (int g = 0; g < 8; ++g) byte |= ((uc[4 * g + i] >> G.lo_bits) & 1) << g;
          cp[HI + 4 * r + i] = static_cast<uint8_t>(byte);
        } else if (G.hi_bits == 2) {
          for (int h = 0; h < 2; ++h) {
            int byte = 0;
            for (int k = 0; k < 4; ++k) byte |= ((uc[16 * h + 4 * k + i] >> 4) & 3) << (2 * k);
            cp[HI + 64 * h + 4 * r + i] = static_cast<uint8_t>(byte);
          }
        }
      }
    }
    for (int j = 0; j < G.ns; ++j) bp[SO + 16 * j + r] = static_cast<uint8_t>(static_cast<int8_t>(s[j]));
    if (G.mins)
      for (int j = 0; j < G.ns; ++j) bp[MO + 32 * (j / 2) + 2 * r + j % 2] = static_cast<uint8_t>(mn[j]);
    std::memcpy(bp + DO + 2 * r, &D, 2);
    if (G.mins) std::memcpy(bp + DO + 32 + 2 * r, &Dmin, 2);
  }
}

bool pack_kq(WeightRef& w, PackedStore& store, ThreadPool* pool) {
  constexpr int R = detail::kPackRows;
  const detail::KqPackGeom G = detail::kqp_geom(w.type);
  const int64_t nb = w.cols / 256, groups = (w.rows + R - 1) / R;
  const size_t gbytes = detail::kqp_block_bytes(G) * static_cast<size_t>(nb), rb = row_bytes(w.type, w.cols);
  uint8_t* out = store.alloc(gbytes * static_cast<size_t>(groups), false);
  const auto* src = static_cast<const uint8_t*>(w.data);
  over_groups(groups, pool, [&](int64_t g0, int64_t g1) {
    std::memset(out + static_cast<size_t>(g0) * gbytes, 0, static_cast<size_t>(g1 - g0) * gbytes);  // padding rows stay 0
    for (int64_t n = g0 * R; n < std::min(w.rows, g1 * R); ++n)
      pack_kq_row(G, w.type, src + static_cast<size_t>(n) * rb, nb, static_cast<int>(n % R), out + static_cast<size_t>(n / R) * gbytes);
  });
  w.packed = out;
  return true;
}

// 32-element block types (layout comment in internal.h): the file's nibble bytes keep their order,
// Q8_0's int8 quants become unsigned (+128), Q5's fifth bits are regrouped per 4-element step.
bool pack_32(WeightRef& w, PackedStore& store, ThreadPool* pool) {
  constexpr int R = detail::kPackRows;
  const DType t = w.type;
  const bool q8 = t == DType::Q8_0, q5 = t == DType::Q5_0 || t == DType::Q5_1, mins = detail::packed_has_min(t);
  // Offsets in the file's block of the fifth bits and of the codes.
  const size_t qh_off = t == DType::Q5_1 ? 4 : 2, qs_off = t == DType::Q5_1 ? 8 : t == DType::Q5_0 ? 6 : mins ? 4 : 2;
  const int64_t nb = w.cols / 32, groups = (w.rows + R - 1) / R;
  const size_t gbytes = detail::packed_group_bytes(t, nb), bb = block_bytes(t), rb = row_bytes(t, w.cols);
  uint8_t* out = store.alloc(gbytes * static_cast<size_t>(groups), false);
  const auto* src = static_cast<const uint8_t*>(w.data);
  over_groups(groups, pool, [&](int64_t g0, int64_t g1) {
    std::memset(out + static_cast<size_t>(g0) * gbytes, 0, static_cast<size_t>(g1 - g0) * gbytes);
    for (int64_t g = g0; g < g1; ++g) {
      uint8_t* gp = out + static_cast<size_t>(g) * gbytes;
      for (int r = 0; r < R; ++r) {
        const int64_t n = g * R + r;
        for (int64_t b = 0; b < nb; ++b) {
          uint8_t* q = gp + detail::packed_quant_offset(t, b) + 4 * r;
          if (n >= w.rows) {  // padding row: scale 0, code for 0 (Q8_0 stores q + 128)
            if (q8)
              for (int s = 0; s < 8; ++s) std::memset(q + 64 * s, 128, 4);
            continue;
          }
          const uint8_t* blk = src + static_cast<size_t>(n) * rb + static_cast<size_t>(b) * bb;
          std::memcpy(gp + detail::packed_scale_offset(t, b) + 2 * r, blk, 2);
          if (mins) std::memcpy(gp + detail::packed_min_offset(t, b) + 2 * r, blk + 2, 2);
          const uint8_t* qs = blk + qs_off;
          if (q8) {
            for (int s = 0; s < 8; ++s)
              for (int i = 0; i < 4; ++i) q[64 * s + i] = static_cast<uint8_t>(qs[4 * s + i] ^ 0x80);
            continue;
          }
          std::memcpy(q, qs, 4);
          std::memcpy(q + 64, qs + 4, 4);
          std::memcpy(q + 128, qs + 8, 4);
          std::memcpy(q + 192, qs + 12, 4);
          if (q5) {
            uint32_t qh;
            std::memcpy(&qh, blk + qh_off, 4);
            for (int i = 0; i < 4; ++i) {
              int byte = 0;
              for (int s = 0; s < 4; ++s) byte |= (static_cast<int>((qh >> (4 * s + i)) & 1) << s) | (static_cast<int>((qh >> (16 + 4 * s + i)) & 1) << (4 + s));
              q[256 + i] = static_cast<uint8_t>(byte);
            }
          }
        }
      }
    }
  });
  w.packed = out;
  return true;
}

}  // namespace

bool pack_weight(WeightRef& w, PackedStore& store, ThreadPool* pool) {
  if (!w.data || w.rows <= 0 || w.cols <= 0 || w.packed || !detail::packed_kernels_available(w.type)) return false;
  if (w.type == DType::BF16 && detail::bf16_pair_layout()) return pack_bf16_pairs(w, store, pool);
  if (w.type == DType::F32 || w.type == DType::F16 || w.type == DType::BF16) return pack_float(w, store, pool);
  if (detail::kqp_type(w.type)) return pack_kq(w, store, pool);
  return pack_32(w, store, pool);
}

}  // namespace kvscope::kernels
