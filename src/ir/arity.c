/* arity.c - each node's inputs and outputs against its op's schema: how
 * many, and which inputs must be given (arity.def, generated from ONNX's
 * operator schemas by gen_arity.py). Checked once, when the graph is
 * linked, before inference and for every target, so that no later layer
 * reads an input that is not there.
 *
 * A version the schemas know is checked exactly; one newer than theirs
 * against the minimums of their newest (check_row); one the op
 * table and the schemas disagree on otherwise is left to inference.
 */
#include "ir/arity.h"

#include <stdio.h>
#include <string.h>

typedef struct arity_row {
  const char *domain, *name;
  int since, min_in, max_in; /* max -1: no bound */
  unsigned required;         /* bit i: formal input i must be given */
  int min_out, max_out;
  const char *input_names; /* "X,W,B" */
} arity_row;

static const arity_row rows[] = {
#define ARITY(domain, name, since, min_in, max_in, required, min_out, max_out, names) \
  {domain, name, since, min_in, max_in, required, min_out, max_out, names},
#include "ir/arity.def"
#include "ir/arity_contrib.def"
#undef ARITY
};

enum { ROW_COUNT = sizeof(rows) / sizeof(rows[0]) };

/* The row of the op's version in effect at `opset`, or NULL. */
static const arity_row *row_for(const char *domain, const char *op, int64_t opset) {
  const arity_row *best = NULL;
  for (int i = 0; i < ROW_COUNT; i++)
    if (rows[i].since <= opset && strcmp(rows[i].name, op) == 0 && strcmp(rows[i].domain, domain) == 0 &&
        (!best || rows[i].since > best->since))
      best = &rows[i];
  return best;
}

/* The name of formal input i ("input 3" past the list). */
static void formal_name(const arity_row *r, int i, char *out, size_t size) {
  const char *p = r->input_names;
  for (int k = 0; k < i && p; k++) {
    p = strchr(p, ',');
    if (p) p++;
  }
  if (!p || !*p) {
    snprintf(out, size, "input %d", i);
    return;
  }
  size_t len = strcspn(p, ",");
  snprintf(out, size, "input %d '%.*s'", i, (int)len, p);
}

static void range_text(int lo, int hi, char *out, size_t size) {
  if (hi < 0) snprintf(out, size, "at least %d", lo);
  else if (lo == hi) snprintf(out, size, "%d", lo);
  else snprintf(out, size, "%d to %d", lo, hi);
}

/* Ops whose versions after the schemas' made inputs optional that theirs
 * require (from ONNX's changelog, opsets 18 to 25). */
static const char *const RELAXED_LATER[] = {"OptionalHasElement"};

/* The node against row r: exactly, or (`newer`: the node's version is
 * newer than the schemas know) to r's minimums only, since ops gain
 * optional inputs and outputs over versions but, RELAXED_LATER aside, do
 * not drop required ones. */
static int check_row(const arity_row *r, const o2m_node *n, int newer, char *why, size_t size) {
  char who[96], range[64];
  if (newer) snprintf(who, sizeof(who), "%s (since version %d)", n->op_type, r->since);
  else snprintf(who, sizeof(who), "%s-%d", n->op_type, r->since);
  int max_in = newer ? -1 : r->max_in, max_out = newer ? -1 : r->max_out;
  if (n->n_inputs < r->min_in || (max_in >= 0 && n->n_inputs > max_in)) {
    range_text(r->min_in, max_in, range, sizeof(range));
    snprintf(why, size, "has %d input%s; %s takes %s", n->n_inputs, n->n_inputs == 1 ? "" : "s", who, range);
    return -1;
  }
  for (int i = 0; i < n->n_inputs && i < 31; i++) {
    if (!(r->required >> i & 1u) || n->input_names[i][0]) continue;
    char name[96];
    formal_name(r, i, name, sizeof(name));
    snprintf(why, size, "%s is required but not given", name);
    return -1;
  }
  if (n->n_outputs < r->min_out || (max_out >= 0 && n->n_outputs > max_out)) {
    range_text(r->min_out, max_out, range, sizeof(range));
    snprintf(why, size, "has %d output%s; %s gives %s", n->n_outputs, n->n_outputs == 1 ? "" : "s", who, range);
    return -1;
  }
  return 0;
}

/* The first version the schemas know of the op, or 0. */
static int first_version(const char *domain, const char *op) {
  int first = 0;
  for (int i = 0; i < ROW_COUNT; i++)
    if (strcmp(rows[i].name, op) == 0 && strcmp(rows[i].domain, domain) == 0 && (!first || rows[i].since < first))
      first = rows[i].since;
  return first;
}

int o2m_arity_check(const o2m_node *n, int op_version, char *why, size_t size) {
  const char *domain = strcmp(n->domain, "ai.onnx") == 0 ? "" : n->domain;
  const arity_row *r = row_for(domain, n->op_type, n->opset);
  /* an op the model's opset does not have yet (nor the op table, which
   * takes onnxruntime's older LayerNormalization of the default domain) */
  int first = r || op_version ? 0 : first_version(domain, n->op_type);
  if (first) {
    snprintf(why, size, "%s is not in opset %lld of its domain: it came in opset %d", n->op_type,
             (long long)n->opset, first);
    return -1;
  }
  if (r && op_version > r->since) {
    for (size_t i = 0; i < sizeof(RELAXED_LATER) / sizeof(RELAXED_LATER[0]); i++)
      if (strcmp(n->op_type, RELAXED_LATER[i]) == 0) return 0;
    return check_row(r, n, 1, why, size);
  }
  /* otherwise the schemas' version must be the one the op table takes */
  return r && r->since == op_version ? check_row(r, n, 0, why, size) : 0;
}
