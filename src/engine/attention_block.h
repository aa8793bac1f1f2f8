// Block-wise F32 attention loops for the paged attention: one call covers the rows of one KV block
// (up to block_size token rows) for all query heads of a GQA group, instead of one dot/axpy call
// per position and head. The paged attention calls the AVX-512 variants when that ISA is active
// (other ISAs keep the per-position ops); the scalar versions are their reference.
#pragma once

namespace kvscope::attn {

// block_scores:       scores[g * ld + i] = scale * dot(q + g * hd, k + i * stride, hd), rows i < n, heads g < group.
// block_weighted_sum: out[g * hd + c] += sum_i p[g * ld + i] * v[i * stride + c], c < hd.
namespace ref {
void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld);
void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out);
}  // namespace ref

namespace avx512 {
void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld);
void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out);
}  // namespace avx512

}  // namespace kvscope::attn
