// GGML's type ids (ggml.h's enum ggml_type), names and block sizes, from the GGUF format description.
#include "kernels/ggml_types.h"

#include <string>

namespace kvscope::kernels {

namespace {
constexpr GgmlTypeInfo kTypes[] = {
    {0, "F32", 1, 4},         {1, "F16", 1, 2},          {2, "Q4_0", 32, 18},      {3, "Q4_1", 32, 20},
    {4, "Q4_2", 0, 0},        {5, "Q4_3", 0, 0},         {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},       {10, "Q2_K", 256, 84},    {11, "Q3_K", 256, 110},
    {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},
    {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},   {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},   {22, "IQ2_S", 256, 82},   {23, "IQ4_XS", 256, 136},
    {24, "I8", 1, 1},         {25, "I16", 1, 2},         {26, "I32", 1, 4},        {27, "I64", 1, 8},
    {28, "F64", 1, 8},        {29, "IQ1_M", 256, 56},    {30, "BF16", 1, 2},       {31, "Q4_0_4_4", 0, 0},
    {32, "Q4_0_4_8", 0, 0},   {33, "Q4_0_8_8", 0, 0},    {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},
    {36, "IQ4_NL_4_4", 0, 0}, {37, "IQ4_NL_4_8", 0, 0},  {38, "IQ4_NL_8_8", 0, 0}, {39, "MXFP4", 32, 17},
};
}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
  return id < sizeof(kTypes) / sizeof(kTypes[0]) ? &kTypes[id] : nullptr;
}

const char* ggml_type_name(uint32_t id) {
  if (const GgmlTypeInfo* t = ggml_type_info(id)) return t->name;
  thread_local std::string s;
  s = "type id " + std::to_string(id);
  return s.c_str();
}

}  // namespace kvscope::kernels
