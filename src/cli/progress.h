// A progress bar on stderr for long commands: redrawn in place on a terminal, one line per 10% in
// logs. Never on stdout, so --json output stays clean.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace kvscope::cli {

class Progress {
 public:
  // with_accuracy: the count passed as `correct` is shown as a percentage of `done` ("acc").
  Progress(bool on, int total, std::string label, bool with_accuracy = true)
      : on_(on), tty_(isatty(2)), acc_(with_accuracy), total_(total), label_(std::move(label)) {}
  void update(int done, int correct, double elapsed_s) {
    if (!on_) return;
    const int pct = total_ ? done * 100 / total_ : 100;
    if (!tty_ && pct / 10 == last_decile_ && done != total_) return;  // logs: one line per 10%
    last_decile_ = pct / 10;
    const int width = 30, fill = total_ ? done * width / total_ : width;
    std::string bar(fill, '=');
    if (fill < width) bar += '>' + std::string(width - fill - 1, ' ');
    std::fprintf(stderr, "%s%s [%s] %d/%d", tty_ ? "\r" : "", label_.c_str(), bar.c_str(), done, total_);
    if (acc_) std::fprintf(stderr, " acc %.1f%%", done ? 100.0 * correct / done : 0.0);
    if (elapsed_s >= 0.5) std::fprintf(stderr, " %.1f/s", done / elapsed_s);  // a rate over less is noise
    if (tty_) std::fputs("\033[K", stderr);  // clear what a longer earlier line left
    open_ = tty_ && done != total_;
    if (!open_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  // Erases the bar on a terminal, before other output is written there.
  void clear() {
    if (on_ && tty_) std::fputs("\r\033[K", stderr), std::fflush(stderr);
    open_ = false;
  }
  // Ends a bar left short of its total (work that stopped early) with a newline.
  void finish() {
    if (open_) std::fputc('\n', stderr), std::fflush(stderr);
    open_ = false;
  }
  // Without an accuracy: elapsed time is measured from construction.
  void step(int done) { update(done, 0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count()); }

 private:
  bool on_, tty_, acc_, open_ = false;
  int total_;
  std::string label_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace kvscope::cli
