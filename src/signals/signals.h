// The signals module's public header: the KV feature tap, embeddings from the cache, KV-CoE and
// baseline confidence scores, and the metrics that evaluate them.
#pragma once
#include "signals/coe_scores.h"
#include "signals/confidence_metrics.h"
#include "signals/embed_metrics.h"
#include "signals/embedding.h"
#include "signals/kv_tap.h"
#include "signals/scored_generation.h"
