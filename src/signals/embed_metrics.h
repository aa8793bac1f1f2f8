// Embedding-quality metrics of the mini benchmark (eval-embed), on unit vectors with integer labels.
#pragma once
#include <cstdint>
#include <vector>

namespace kvscope::signals {

using Matrix = std::vector<std::vector<float>>;

// Accuracy of nearest-centroid classification (cosine to each class's mean train vector) on test.
double nearest_centroid_accuracy(const Matrix& train, const std::vector<int>& train_labels, const Matrix& test,
                                 const std::vector<int>& test_labels);
// k-means (k-means++ seeding from `seed`, Euclidean, at most 100 iterations): cluster of each row.
std::vector<int> kmeans(const Matrix& x, int k, uint64_t seed = 1);
// Purity: sum over clusters of the count of its most frequent label, over the number of rows.
double purity(const std::vector<int>& clusters, const std::vector<int>& labels);
// Spearman rank correlation (ties get mid-ranks); NaN when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace kvscope::signals
