#include "reasoning/early_cut.h"

#include "util/error.h"

namespace kvscope::reasoning {

namespace {
// The question is fed before the first attempt's begin(): until then every row is a prompt row, so
// the prompt parts (pooled u, prompt prior) see it.
constexpr int kQuestion = 1 << 30;
}  // namespace

ProbeEarlyCut::ProbeEarlyCut(const Model& model, const signals::ProbeFile& probe, double below, int min_tokens)
    : tokenizer_(model.tokenizer()), probe_(probe), features_(model.hparams(), probe.spec, kQuestion), below_(below > 0 ? below : probe.cut_below),
      min_tokens_(min_tokens) {
  if (probe.mlp.input_dim() != features_.dim())
    throw InputError("confidence probe expects " + std::to_string(probe.mlp.input_dim()) + " features, this model gives " +
                     std::to_string(features_.dim()));
}

void ProbeEarlyCut::begin(int prompt_len) {
  // The question's KV stays cached across attempts and is not fed again: the prompt part of the
  // features is kept from the first attempt (positions before the watermark are not re-observed).
  auto keep = features_.state();
  features_.reset(prompt_len);
  if (probe_.spec.prompt) {
    auto s = features_.state();
    s.prompt_sum = keep.prompt_sum;
    s.next_pos = std::min(keep.next_pos, prompt_len);
    features_.restore(s);
  }
  if (probe_.spec.prior) {  // likewise the prompt prior, read once from the question
    auto s = features_.state();
    s.prior_sum = keep.prior_sum;
    s.prior_count = keep.prior_count;
    s.prior_next = keep.prior_next;
    s.prior = keep.prior;
    features_.restore(s);
  }
  stats_ = signals::LogitStats();
}

void ProbeEarlyCut::token(const float* logits, int n_vocab, int32_t id) {
  stats_.add(logits, n_vocab, id);
  if (features_.wants_tokens()) features_.on_token(stats_, tokenizer_.token_to_piece(id));
}

bool ProbeEarlyCut::cut(Mode, int generated, double& p_correct, double& threshold) {
  threshold = below_;
  if (generated < min_tokens_ || below_ <= 0) return false;
  p_correct = probe_.mlp.score(features_.features(stats_));
  return p_correct < below_;
}

}  // namespace kvscope::reasoning
