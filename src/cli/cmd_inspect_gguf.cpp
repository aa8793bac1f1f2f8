// kvscope inspect: a GGUF file's header, metadata and every tensor (type, shape, size), like
// gguf-dump. Reads leniently, so a file kvscope refuses to run still lists, with each tensor's
// reason (unsupported type, partial blocks, truncated data) next to it.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "gguf/gguf.h"
#include "kernels/ggml_types.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

using gguf::Value;
using gguf::ValueType;

nlohmann::json to_json(const Value& v, size_t max_items) {
  switch (v.type) {
    case ValueType::STRING: return v.as_string();
    case ValueType::BOOL: return v.as_bool();
    case ValueType::FLOAT32:
    case ValueType::FLOAT64: return v.as_float();
    case ValueType::ARRAY: {
      nlohmann::json a = nlohmann::json::array();
      const auto& items = v.as_array().items;
      for (size_t i = 0; i < items.size() && i < max_items; ++i) a.push_back(to_json(items[i], max_items));
      return a;
    }
    default:
      if (const auto* u = std::get_if<uint64_t>(&v.v)) return *u;
      return v.as_int();
  }
}

// One line: strings quoted, arrays as their type and length with the first few items.
std::string brief(const Value& v) {
  if (v.type == ValueType::ARRAY) {
    const auto& a = v.as_array();
    std::string s = "[" + std::to_string(a.items.size()) + " x " + gguf::value_type_name(a.elem_type) + "]";
    const size_t show = std::min<size_t>(a.items.size(), 6);
    if (show) {
      s += " ";
      for (size_t i = 0; i < show; ++i) s += (i ? ", " : "") + brief(a.items[i]);
      if (show < a.items.size()) s += ", ...";
    }
    return s;
  }
  const nlohmann::json j = to_json(v, 0);
  std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s;
}

std::string shape_str(const std::vector<int64_t>& ne) {
  std::string s;
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? " x " : "") + std::to_string(ne[i]);
  return s;
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "List a GGUF file's metadata and tensors (type, shape) and what kvscope cannot run");
  struct Opts {
    std::string model;
    bool json = false, no_tensors = false;
    size_t max_items = 16;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("-m,--model", o->model, "GGUF file")->required();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--no-tensors", o->no_tensors, "Metadata only");
  cmd->add_option("--max-array", o->max_items, "Array items printed per metadata key in --json (default 16)");
  cmd->callback([o] {
    auto f = gguf::File::open_lenient(o->model);
    std::map<std::string, int> type_counts;
    int n_problems = 0;
    for (const auto& t : f->tensors()) {
      ++type_counts[kernels::ggml_type_name(t.ggml_type)];
      n_problems += !t.problem.empty();
    }
    if (o->json) {
      nlohmann::json j;
      j["path"] = f->path();
      j["version"] = f->version();
      j["alignment"] = f->alignment();
      j["file_bytes"] = f->size();
      j["metadata"] = nlohmann::json::object();
      for (const auto& [k, v] : f->metadata()) {
        nlohmann::json e = {{"type", gguf::value_type_name(v.type)}, {"value", to_json(v, o->max_items)}};
        if (v.type == ValueType::ARRAY) e["length"] = v.as_array().items.size();
        j["metadata"][k] = e;
      }
      j["tensors"] = nlohmann::json::array();
      if (!o->no_tensors)
        for (const auto& t : f->tensors()) {
          nlohmann::json e = {{"name", t.name}, {"type", kernels::ggml_type_name(t.ggml_type)}, {"type_id", t.ggml_type},
                              {"shape", t.ne}, {"bytes", t.nbytes}, {"offset", t.offset}};
          if (!t.problem.empty()) e["problem"] = t.problem;
          j["tensors"].push_back(e);
        }
      j["type_counts"] = type_counts;
      j["tensor_count"] = f->tensors().size();
      j["unusable_tensors"] = n_problems;
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return;
    }
    std::printf("%s: GGUF v%u, %zu metadata keys, %zu tensors, %zu bytes, alignment %zu\n", f->path().c_str(),
                f->version(), f->metadata().size(), f->tensors().size(), f->size(), f->alignment());
    std::printf("\nmetadata:\n");
    for (const auto& [k, v] : f->metadata())
      std::printf("  %-44s %-8s %s\n", k.c_str(), gguf::value_type_name(v.type), brief(v).c_str());
    if (!o->no_tensors) {
      std::printf("\ntensors:\n  %5s %-36s %-8s %-22s %12s\n", "#", "name", "type", "shape", "bytes");
      size_t i = 0;
      for (const auto& t : f->tensors()) {
        std::printf("  %5zu %-36s %-8s %-22s %12" PRIu64 "%s%s\n", i++, t.name.c_str(), kernels::ggml_type_name(t.ggml_type),
                    shape_str(t.ne).c_str(), t.nbytes, t.problem.empty() ? "" : "  <- ", t.problem.c_str());
      }
    }
    std::printf("\ntypes:");
    for (const auto& [name, n] : type_counts) std::printf(" %s x%d", name.c_str(), n);
    std::printf("\n");
    if (n_problems)
      std::printf("kvscope cannot run this file: %d tensor%s marked above\n", n_problems, n_problems == 1 ? "" : "s");
    else
      std::printf("every tensor has a type and size kvscope can use\n");
  });
}

}  // namespace kvscope::cli
