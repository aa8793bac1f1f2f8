// A progress bar on stderr for long evaluations: redrawn in place on a terminal, one line per
// 10% in logs.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <string>

namespace kvscope::cli {

class Progress {
 public:
  Progress(bool on, int total, std::string label) : on_(on), tty_(isatty(2)), total_(total), label_(std::move(label)) {}
  void update(int done, int correct, double elapsed_s) {
    if (!on_) return;
    const int pct = total_ ? done * 100 / total_ : 100;
    if (!tty_ && pct / 10 == last_decile_ && done != total_) return;  // logs: one line per 10%
    last_decile_ = pct / 10;
    const int width = 30, fill = total_ ? done * width / total_ : width;
    std::string bar(fill, '=');
    if (fill < width) bar += '>' + std::string(width - fill - 1, ' ');
    std::fprintf(stderr, "%s%s [%s] %d/%d acc %.1f%% %.1f/s", tty_ ? "\r" : "", label_.c_str(), bar.c_str(), done,
                 total_, done ? 100.0 * correct / done : 0.0, elapsed_s > 0 ? done / elapsed_s : 0.0);
    if (!tty_ || done == total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  bool on_, tty_;
  int total_;
  std::string label_;
  int last_decile_ = -1;
};

}  // namespace kvscope::cli
