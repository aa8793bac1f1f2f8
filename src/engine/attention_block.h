// Block-wise F32 attention loops for the paged attention: one call covers the rows of one KV block
// (up to block_size token rows) for all query heads of a GQA group, instead of one dot/axpy call
// per position and head. AVX-512 variants are chosen at run time; the scalar versions are their
// reference (and what other ISAs run).
#pragma once

namespace kvscope::attn {

// scores[g * ld + i] = scale * dot(q + g * hd, k + i * stride, hd), for rows i < n, heads g < group.
void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld);
// out[g * hd + c] += sum_i p[g * ld + i] * v[i * stride + c], for c < hd, rows i < n, heads g < group.
void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out);

namespace ref {
void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld);
void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out);
}  // namespace ref

namespace avx512 {
void block_scores(const float* k, int stride, int n, const float* q, int hd, int group, float scale, float* scores, int ld);
void block_weighted_sum(const float* v, int stride, int n, const float* p, int ld, int hd, int group, float* out);
}  // namespace avx512

}  // namespace kvscope::attn
