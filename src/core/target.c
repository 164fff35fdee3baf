/* target.c - the names of the emit targets (shared by CLI and library). */
#include <string.h>

#include "onnx2mlir.h"

static const char *const target_names[] = {
    [O2M_TARGET_TORCH] = "torch",   [O2M_TARGET_ONNX] = "onnx",
    [O2M_TARGET_LINALG] = "linalg", [O2M_TARGET_TOSA] = "tosa",
    [O2M_TARGET_STABLEHLO] = "stablehlo",
};

int o2m_target_from_name(const char *name) {
  for (size_t i = 0; i < sizeof(target_names) / sizeof(target_names[0]); i++)
    if (strcmp(name, target_names[i]) == 0) return (int)i;
  return -1;
}

const char *o2m_target_name(o2m_target target) {
  if ((unsigned)target < sizeof(target_names) / sizeof(target_names[0]))
    return target_names[target];
  return "unknown";
}
