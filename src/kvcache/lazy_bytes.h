// Zero-filled bytes whose pages the kernel commits on first touch (an anonymous private mapping),
// so a KV cache sized for a whole 128K context costs memory, and time to clear, only for the
// token blocks actually written. std::vector would zero (touch) every page up front.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace kvscope {

class LazyBytes {
 public:
  LazyBytes() = default;
  explicit LazyBytes(size_t n) { resize(n); }
  ~LazyBytes() { release(); }
  LazyBytes(const LazyBytes&) = delete;
  LazyBytes& operator=(const LazyBytes&) = delete;
  LazyBytes(LazyBytes&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  LazyBytes& operator=(LazyBytes&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  // Replaces the contents with n zero bytes.
  void resize(size_t n) {
    release();
    if (n == 0) return;
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    p_ = static_cast<uint8_t*>(p);
    n_ = n;
  }
  uint8_t* data() { return p_; }
  const uint8_t* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  void release() {
    if (p_) munmap(p_, n_);
    p_ = nullptr;
    n_ = 0;
  }
  uint8_t* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace kvscope
