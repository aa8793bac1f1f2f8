// The difficulty MLP: it learns a separable problem, its file round-trips exactly, and damaged or
// foreign files are refused with a message naming the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "reasoning/difficulty_mlp.h"
#include "training/difficulty_train.h"
#include "training/linear_probe.h"
#include "test_util.h"
#include "util/error.h"

namespace difficulty_mlp_test {

using namespace kvscope;
using namespace kvscope::reasoning;

namespace {

// Three clusters in 16 dimensions, offset by a large constant (standardization must handle it).
void clusters(int n, std::vector<std::vector<float>>& X, std::vector<int>& y, uint64_t seed) {
  uint64_t s = seed;
  auto u = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return ((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5;
  };
  for (int i = 0; i < n; ++i) {
    const int c = i % 3;
    std::vector<float> x(16);
    for (int j = 0; j < 16; ++j) x[j] = static_cast<float>(100.0 + u() + (j % 3 == c ? 1.5 : 0.0));
    X.push_back(x);
    y.push_back(c);
  }
}

DifficultyFile trained(uint64_t fp) {
  std::vector<std::vector<float>> X;
  std::vector<int> y;
  clusters(600, X, y, 3);
  DifficultyFile f;
  f.model_fingerprint = fp;
  f.features.layers = {1, 2};
  f.features.prompt_fraction = 0.5;
  f.mlp = DifficultyMLP(16, 8, 1);
  TrainOptions o;
  o.max_epochs = 60;
  train_difficulty(f.mlp, X, y, o);
  f.info = R"({"task":"test"})";
  return f;
}

}  // namespace

TEST(DifficultyMLP, LearnsSeparableClassesAndMapsThemToDifficulty) {
  std::vector<std::vector<float>> X, Xt;
  std::vector<int> y, yt;
  clusters(600, X, y, 3);
  clusters(300, Xt, yt, 99);
  DifficultyMLP m(16, 8, 1);
  int epochs_seen = 0;
  TrainOptions o;
  o.max_epochs = 80;
  o.on_epoch = [&](int, double, double, double) { ++epochs_seen; };
  const auto rep = train_difficulty(m, X, y, o);
  EXPECT_GT(rep.val_accuracy, 0.9);
  EXPECT_EQ(epochs_seen, rep.epochs);
  EXPECT_LE(rep.best_epoch, rep.epochs);
  int ok = 0;
  double d_fast = 0, d_slow = 0;
  for (size_t i = 0; i < Xt.size(); ++i) {
    const auto e = m.estimate(Xt[i]);
    ok += e.label() == yt[i];
    EXPECT_GE(e.difficulty, 0);
    EXPECT_LE(e.difficulty, 100);
    EXPECT_NEAR(e.probs[0] + e.probs[1] + e.probs[2], 1.0, 1e-9);
    EXPECT_NEAR(e.confidence, std::max({e.probs[0], e.probs[1], e.probs[2]}), 1e-12);
    (yt[i] == 0 ? d_fast : yt[i] == 2 ? d_slow : d_fast) += yt[i] == 1 ? 0 : e.difficulty;
  }
  EXPECT_GT(ok, 270);
  EXPECT_LT(d_fast / 100, d_slow / 100);  // fast-class problems read as easier than slow-class ones
  EXPECT_LT(m.n_params(), 1000000u);
  EXPECT_THROW(m.estimate(std::vector<float>(15)), InputError);
}

TEST(DifficultyMLP, EarlyStoppingKeepsTheBestValidationEpoch) {
  std::vector<std::vector<float>> X;
  std::vector<int> y;
  clusters(60, X, y, 5);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int>((i * 2654435761u >> 7) % 3);  // noise labels
  DifficultyMLP m(16, 32, 2);
  TrainOptions o;
  o.max_epochs = 500;
  o.patience = 10;
  const auto rep = train_difficulty(m, X, y, o);
  EXPECT_LT(rep.epochs, 500);
  EXPECT_EQ(rep.epochs - rep.best_epoch, 10);
}

TEST(DifficultyFileFormat, RoundTripGivesIdenticalEstimates) {
  const auto f = trained(42);
  const auto path = (test::temp_dir() / "d.bin").string();
  save_difficulty(path, f);
  const auto g = load_difficulty(path, 42);
  EXPECT_EQ(g.features.layers, f.features.layers);
  EXPECT_EQ(g.features.prompt_fraction, 0.5);
  EXPECT_EQ(g.info, f.info);
  std::vector<float> x(16, 100.2f);
  EXPECT_EQ(g.mlp.estimate(x).difficulty, f.mlp.estimate(x).difficulty);
  EXPECT_NO_THROW(load_difficulty(path, 0));  // 0: no model check
}

TEST(DifficultyFileFormat, ForeignOrDamagedFilesAreRefused) {
  const auto f = trained(42);
  const auto dir = test::temp_dir();
  const auto path = (dir / "d.bin").string();
  save_difficulty(path, f);
  try {
    load_difficulty(path, 43);
    FAIL() << "a file for another model was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another model"), std::string::npos) << e.what();
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto write = [&](const std::string& name, const std::string& b) {
    const auto p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << b;
    return p;
  };
  EXPECT_THROW(load_difficulty(write("magic.bin", "GGUF" + bytes.substr(4)), 42), InputError);
  EXPECT_THROW(load_difficulty(write("short.bin", bytes.substr(0, bytes.size() / 2)), 42), InputError);
  EXPECT_THROW(load_difficulty(write("long.bin", bytes + "xx"), 42), InputError);
  EXPECT_THROW(load_difficulty(write("empty.bin", ""), 42), InputError);
  EXPECT_THROW(load_difficulty((dir / "missing.bin").string(), 42), InputError);
}

TEST(LinearProbe, SeparatesAndScoresInRange) {
  std::vector<std::vector<float>> X;
  std::vector<int> y;
  clusters(300, X, y, 7);
  std::vector<bool> pos;
  for (int v : y) pos.push_back(v == 2);
  LinearProbe p;
  p.fit(X, pos);
  int ok = 0;
  for (size_t i = 0; i < X.size(); ++i) {
    const double s = p.predict(X[i]);
    EXPECT_GE(s, 0);
    EXPECT_LE(s, 1);
    ok += (s > 0.5) == pos[i];
  }
  EXPECT_GT(ok, 280);
}

}  // namespace difficulty_mlp_test
