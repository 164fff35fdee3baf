/* fuzz_run.c - libFuzzer target through o2m_model_run: a model that
 * loads is run on inputs of its declared types (unknown sizes taken as 2,
 * at most 4096 elements each) filled with small and edge values from a
 * generator seeded by the model's bytes, on the Linalg or the TOSA target
 * (chosen by the same seed), compiled at -O1. Any crash, leak, sanitizer
 * report or failure without a message is a bug; a failure with one (an op
 * the target lacks, a refused input) is not. A model with a Loop that may
 * legitimately never end (no trip count, or one not bounded by the values
 * fed) is imported but not run: a run that does not stop is what it asks
 * for, not a bug. Mutations are structure-aware (fuzz_mutator.c). */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx2mlir.h"

enum { MAX_INPUTS = 16, MAX_ELEMENTS = 4096 };

static uint64_t next(uint64_t *state) { /* splitmix64 */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* bytes per element of the dtypes fed (0: not fed, the run is skipped) */
static size_t element_size(int dtype) {
  static const unsigned char SIZES[] = {[1] = 4, [2] = 1, [3] = 1, [4] = 2, [5] = 2, [6] = 4, [7] = 8,
                                        [9] = 1, [10] = 2, [11] = 8, [12] = 4, [13] = 8, [16] = 2};
  return dtype > 0 && dtype < (int)sizeof SIZES ? SIZES[dtype] : 0;
}

static void fill(void *data, size_t count, int dtype, uint64_t *state) {
  static const float FLOATS[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -3.0f, 1e-3f, 100.0f};
  for (size_t i = 0; i < count; i++) {
    uint64_t r = next(state);
    int64_t small = (int64_t)(r % 5) - 1; /* -1..3: valid indices, axes and sizes often */
    float f = FLOATS[r % 8];
    switch (dtype) {
    case 1: memcpy((char *)data + 4 * i, &f, 4); break;
    case 11: { double d = f; memcpy((char *)data + 8 * i, &d, 8); break; }
    case 10: case 16: { uint16_t h = (uint16_t)(r & 0x3fff); memcpy((char *)data + 2 * i, &h, 2); break; }
    case 9: ((uint8_t *)data)[i] = (uint8_t)(r & 1); break;
    default: { /* integers, little-endian, sign-extended */
      size_t w = element_size(dtype);
      for (size_t b = 0; b < w; b++) ((uint8_t *)data)[w * i + b] = (uint8_t)((uint64_t)small >> (8 * b));
    }
    }
  }
}

enum { MAX_TRIP_COUNT = 1000 };

/* Whether a Loop's trip count is bounded: a model input (fed -1..3) or a
 * known integer of at most MAX_TRIP_COUNT. */
static int trip_count_bounded(const o2m_value *m) {
  while (m && m->kind == O2M_VALUE_OUTER) m = m->outer;
  if (!m) return 0;
  if (m->kind == O2M_VALUE_INPUT) return 1;
  const o2m_tensor *t = m->known;
  if (!t || t->count != 1 || !t->data) return 0;
  int64_t v = 0;
  if (t->dtype == O2M_DT_INT64 && t->nbytes >= 8) memcpy(&v, t->data, 8);
  else if (t->dtype == O2M_DT_INT32 && t->nbytes >= 4) {
    int32_t w;
    memcpy(&w, t->data, 4);
    v = w;
  } else return 0;
  return v <= MAX_TRIP_COUNT;
}

/* Whether every Loop of g, at every depth, has a bounded trip count. */
static int loops_bounded(const o2m_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    const o2m_node *nd = g->nodes[i];
    if (!strcmp(nd->op_type, "Loop") && !nd->domain[0] &&
        (nd->n_inputs < 1 || !trip_count_bounded(nd->inputs[0])))
      return 0;
    for (int a = 0; a < nd->n_attrs; a++) {
      const o2m_attr *at = &nd->attrs[a];
      if (at->g && !loops_bounded(at->g)) return 0;
      for (int k = 0; at->graphs && k < at->count; k++)
        if (at->graphs[k] && !loops_bounded(at->graphs[k])) return 0;
    }
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  o2m_diag diag = {0};
  o2m_model *model = NULL;
  if (o2m_model_load_bytes(data, size, "fuzz.onnx", NULL, NULL, &model, &diag) != O2M_OK) {
    if (!diag.message[0]) abort();
    return 0;
  }
  uint64_t state = size;
  for (size_t i = 0; i < size; i++) state = state * 131 + data[i];
  int n = o2m_model_input_count(model);
  o2m_tensor_data inputs[MAX_INPUTS];
  int64_t dims[MAX_INPUTS][8];
  void *buffers[MAX_INPUTS] = {0};
  int ok = n <= MAX_INPUTS && loops_bounded(model->graph);
  for (int i = 0; i < n && ok; i++) {
    o2m_value_desc d;
    if (o2m_model_input(model, i, &d, &diag) != O2M_OK || !d.is_tensor || d.rank < 0 || d.rank > 8 ||
        !element_size(d.dtype)) {
      ok = 0;
      break;
    }
    size_t count = 1;
    for (int k = 0; k < d.rank; k++) {
      dims[i][k] = d.dims[k] < 0 ? 2 : d.dims[k];
      count *= (size_t)dims[i][k];
      if (count > MAX_ELEMENTS) ok = 0;
    }
    if (!ok) break;
    buffers[i] = malloc(count * element_size(d.dtype) + 1);
    if (!buffers[i]) abort();
    fill(buffers[i], count, d.dtype, &state);
    inputs[i] = (o2m_tensor_data){NULL, d.dtype, d.rank, dims[i], buffers[i], count * element_size(d.dtype)};
  }
  if (ok) {
    o2m_run_config config = {next(&state) & 1 ? O2M_TARGET_TOSA : O2M_TARGET_LINALG, 1};
    o2m_results *results = NULL;
    if (o2m_model_run(model, &config, n, inputs, &results, &diag) != O2M_OK) {
      if (!diag.message[0] || results) abort();
    } else {
      volatile uint8_t sum = 0; /* every output's bytes readable (ASan checks) */
      for (int i = 0; i < o2m_results_count(results); i++) {
        const o2m_tensor_data *t = o2m_results_get(results, i);
        if (!t) abort();
        for (size_t b = 0; b < t->nbytes; b++) sum += ((const uint8_t *)t->data)[b];
      }
      o2m_results_free(results);
    }
  }
  for (int i = 0; i < n && i < MAX_INPUTS; i++) free(buffers[i]);
  o2m_model_free(model);
  return 0;
}
