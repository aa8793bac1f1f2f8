// kvscope tinygsm: print tinygsm problems (the trainer reads its data from here, as JSON lines).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "tinygsm/tinygsm.h"
#include "util/error.h"

namespace kvscope::cli {

void add_tinygsm_command(CLI::App& app);

void add_tinygsm_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tinygsm", "Generate tinygsm word problems (JSON lines or text)");
  struct Opts {
    std::string split = "train", mode, out, style = "broad";
    size_t n = 10;
    uint64_t seed = tinygsm::kDefaultSeed, start = 0;
    int steps = 0;
    bool jsonl = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--split", o->split, "train | validation | test | heldout")->capture_default_str();
  cmd->add_option("--n", o->n, "Number of problems")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--start", o->start, "Index of the first problem")->capture_default_str();
  cmd->add_option("--steps", o->steps, "Only problems with this many steps (0: 1 to 6 at random)")
      ->check(CLI::Range(0, tinygsm::kMaxSteps));
  cmd->add_option("--style", o->style,
                  "broad (paraphrases, connectives, currencies, distractor statements), natural (questions as people "
                  "type them: bare arithmetic, one-line questions, stories; no heldout split) or classic (the first "
                  "reasoner's phrasing)")
      ->capture_default_str();
  cmd->add_option("--mode", o->mode, "Text output: also print the target of this mode (fast|mixed|slow)");
  cmd->add_option("-o,--output", o->out, "Write to this file instead of stdout");
  cmd->add_flag("--jsonl", o->jsonl, "One JSON object per line (question, answer, steps, worked, prompts, targets)");
  cmd->callback([o] {
    auto split = tinygsm::parse_split(o->split);
    if (!split) throw InputError("unknown split '" + o->split + "' (train, validation, test, heldout)");
    auto style = tinygsm::parse_style(o->style);
    if (!style) throw InputError("unknown style '" + o->style + "' (broad, natural, classic)");
    if (*style == tinygsm::Style::Natural && *split == tinygsm::Split::Heldout)
      throw InputError("the natural style has no heldout split (its held-out set is data/natural/heldout.jsonl)");
    std::optional<tinygsm::Mode> mode;
    if (!o->mode.empty()) {
      mode = tinygsm::parse_mode(o->mode);
      if (!mode) throw InputError("unknown mode '" + o->mode + "' (fast, mixed, slow)");
    }
    std::ofstream file;
    std::ostream* os = &std::cout;
    if (!o->out.empty()) {
      file.open(o->out, std::ios::binary);
      if (!file) throw InputError("cannot write " + o->out);
      os = &file;
    }
    for (size_t i = 0; i < o->n; ++i) {
      const auto item = tinygsm::generate_item(*split, o->seed, o->start + i, o->steps, *style);
      if (o->jsonl) {
        *os << tinygsm::to_json(item) << '\n';
      } else {
        *os << "[" << item.steps << " steps] " << item.question << "\n";
        if (mode) *os << tinygsm::format_target(item, *mode) << "\n";
        else *os << "Answer: " << item.answer << "\n";
        *os << "\n";
      }
    }
    os->flush();
    if (!*os) throw InputError("write failed");
  });
}

}  // namespace kvscope::cli
