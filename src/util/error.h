// Error types shared by every module: exceptions inside, clear messages at the edges.
#pragma once
#include <stdexcept>
#include <string>

namespace kvscope {

// Input the user gave us is wrong (bad file, bad parameter, bad text).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A GGUF file that cannot be parsed or that names things we do not support.
class FormatError : public InputError {
 public:
  using InputError::InputError;
};

// A request that does not fit the model (prompt longer than the context, etc.).
class LimitError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace kvscope
