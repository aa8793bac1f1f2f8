// Stop strings over streamed text: a stop string may span token boundaries, so text that could be
// the start of one is held back until it either completes (generation stops, the stop text is not
// emitted) or can no longer match.
#pragma once
#include <string>
#include <vector>

namespace kvscope::server {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);
  // Appends generated text; returns what can be emitted now. After a match it returns the text
  // before the stop string and stopped() is true; later calls return "".
  std::string push(const std::string& text);
  // The held-back tail, once generation ended without a match.
  std::string flush();
  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  std::string matched_;
  bool stopped_ = false;
};

}  // namespace kvscope::server
