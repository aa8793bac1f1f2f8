// The confidence probe as the adaptive driver's early cut (AttemptMonitor): a fast or mixed
// attempt whose P(correct) falls below the threshold after at least min_tokens tokens is dropped
// and restarted in the next slower mode, before it finishes.
#pragma once
#include <memory>

#include "reasoning/adaptive_generate.h"
#include "signals/confidence_probe.h"

namespace kvscope::reasoning {

class ProbeEarlyCut final : public AttemptMonitor {
 public:
  // below <= 0: the probe file's threshold (cut_below).
  ProbeEarlyCut(const Model& model, const signals::ProbeFile& probe, double below = 0, int min_tokens = 5);
  KVTap* tap() override { return &features_; }
  void begin(int prompt_len) override;
  void token(const float* logits, int n_vocab, int32_t id) override;
  bool cut(Mode mode, int generated, double& p_correct, double& threshold) override;
  double threshold() const { return below_; }

 private:
  const tok::Tokenizer& tokenizer_;
  const signals::ProbeFile& probe_;
  signals::ProbeFeatures features_;
  signals::LogitStats stats_;
  double below_;
  int min_tokens_;
};

}  // namespace kvscope::reasoning
