/* om_table.c - reads om_ops.def and om_versions.def (see om_table.h).
 *
 * Owns: the parsing of the table's rows (space-separated lists with
 * ?, * and :KIND=DEFAULT marks) into om_op records, and the version rule
 * of onnx-mlir's importer: the newest ONNX version of the op at or below
 * the model's opset (the oldest when all are newer) is the version the
 * model means; onnx-mlir's newest version when that is at or above it,
 * else the oldest version onnx-mlir keeps at or above it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/onnx/om_table.h"

typedef struct op_row {
  const char *name, *operands, *results, *regions, *attrs;
} op_row;

static const op_row op_rows[] = {
#define ONNX_OP(name, operands, results, regions, attrs) {name, operands, results, regions, attrs},
#include "emit/onnx/om_ops.def"
#undef ONNX_OP
};

typedef struct version_row {
  const char *op, *kept, *defined; /* newest first */
} version_row;

static const version_row version_rows[] = {
#define ONNX_VERSIONS(op, kept, defined) {op, kept, defined},
#include "emit/onnx/om_versions.def"
#undef ONNX_VERSIONS
};

enum { N_OPS = sizeof(op_rows) / sizeof(op_rows[0]),
       N_VERSIONED = sizeof(version_rows) / sizeof(version_rows[0]) };

/* ---- lists ------------------------------------------------------------- */

/* The space-separated words of `list`, copied into the arena; count or -1. */
static int words(o2m_arena *arena, const char *list, char ***out) {
  int n = 0;
  for (const char *p = list; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    n++;
    while (*p && *p != ' ') p++;
  }
  char **w = o2m_arena_array(arena, (size_t)n + 1, sizeof(char *));
  if (!w) return -1;
  int i = 0;
  for (const char *p = list; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *start = p;
    while (*p && *p != ' ') p++;
    if (!(w[i++] = o2m_arena_strndup(arena, start, (size_t)(p - start)))) return -1;
  }
  *out = w;
  return n;
}

static int read_slots(o2m_arena *arena, const char *list, om_slot **out, int *variadic) {
  char **w;
  int n = words(arena, list, &w);
  if (n < 0) return -1;
  om_slot *slots = o2m_arena_array(arena, (size_t)n + 1, sizeof(om_slot));
  if (!slots) return -1;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(w[i]);
    char mark = w[i][len - 1];
    slots[i].arity = mark == '?' ? OM_OPTIONAL : mark == '*' ? OM_VARIADIC : OM_ONE;
    if (slots[i].arity != OM_ONE) w[i][len - 1] = '\0';
    slots[i].name = w[i];
    if (slots[i].arity == OM_VARIADIC) *variadic = 1;
  }
  *out = slots;
  return n;
}

static const struct {
  const char *code;
  om_attr_kind kind;
} kind_codes[] = {
    {"i", OM_SI64}, {"f", OM_F32},   {"s", OM_STR},  {"is", OM_I64S},
    {"fs", OM_F32S}, {"ss", OM_STRS}, {"t", OM_ANY},  {"ty", OM_TYPE},
};

/* "name:KIND", "name:KIND?" or "name:KIND=DEFAULT" (modified in place). */
static int read_attr(char *word, om_attr_def *def) {
  char *colon = strchr(word, ':');
  if (!colon) return -1;
  *colon = '\0';
  def->name = word;
  char *kind = colon + 1;
  char *eq = strchr(kind, '=');
  size_t len = strlen(kind);
  def->presence = OM_REQUIRED;
  def->dflt = NULL;
  if (eq) {
    *eq = '\0';
    def->presence = OM_DEFAULTED;
    def->dflt = eq + 1;
  } else if (len && kind[len - 1] == '?') {
    kind[len - 1] = '\0';
    def->presence = OM_MAY_LACK;
  }
  for (size_t k = 0; k < sizeof(kind_codes) / sizeof(kind_codes[0]); k++)
    if (strcmp(kind, kind_codes[k].code) == 0) {
      def->kind = kind_codes[k].kind;
      return 0;
    }
  return -1;
}

static om_op *read_op(o2m_arena *arena, const op_row *row) {
  om_op *op = o2m_arena_alloc(arena, sizeof(*op));
  if (!op) return NULL;
  memset(op, 0, sizeof(*op));
  op->name = row->name;
  op->n_operands = read_slots(arena, row->operands, &op->operands, &op->variadic_operands);
  op->n_results = read_slots(arena, row->results, &op->results, &op->variadic_results);
  char **regions, **attrs;
  op->n_regions = words(arena, row->regions, &regions);
  op->regions = (const char **)regions;
  op->n_attrs = words(arena, row->attrs, &attrs);
  if (op->n_operands < 0 || op->n_results < 0 || op->n_regions < 0 || op->n_attrs < 0)
    return NULL;
  op->attrs = o2m_arena_array(arena, (size_t)op->n_attrs + 1, sizeof(om_attr_def));
  if (!op->attrs) return NULL;
  for (int i = 0; i < op->n_attrs; i++)
    if (read_attr(attrs[i], &op->attrs[i]) != 0) return NULL;
  return op;
}

int om_table_init(om_table *table, o2m_arena *arena) {
  memset(table, 0, sizeof(*table));
  for (int i = 0; i < N_OPS; i++) {
    om_op *op = read_op(arena, &op_rows[i]);
    if (!op || o2m_strmap_put(&table->by_name, arena, op->name, op) != 0) return -1;
  }
  return 0;
}

const om_op *om_table_find(const om_table *table, const char *name) {
  return o2m_strmap_get(&table->by_name, name);
}

const om_attr_def *om_attr_def_find(const om_op *op, const char *name) {
  for (int i = 0; i < op->n_attrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) return &op->attrs[i];
  return NULL;
}

/* onnx-mlir's importer gives a fixed-arity op every slot (none for a
 * missing optional one); a variadic op gets its fixed slots and any
 * number of values for the variadic one. */
static void slot_counts(int n, int variadic, int *min, int *max) {
  *min = variadic ? n - 1 : n;
  *max = variadic ? INT32_MAX : n;
}

void om_operand_counts(const om_op *op, int *min, int *max) {
  slot_counts(op->n_operands, op->variadic_operands, min, max);
}

void om_result_counts(const om_op *op, int *min, int *max) {
  slot_counts(op->n_results, op->variadic_results, min, max);
}

/* ---- versions ---------------------------------------------------------- */

/* The numbers of a "21 18 13" list; count (at most cap). */
static int numbers(const char *list, int *out, int cap) {
  int n = 0;
  char *end;
  for (const char *p = list; *p && n < cap; p = end) {
    long v = strtol(p, &end, 10);
    if (end == p) break;
    out[n++] = (int)v;
  }
  return n;
}

const char *om_versioned_name(const char *op_type, int64_t opset, char *buf, int cap) {
  snprintf(buf, (size_t)cap, "%s", op_type);
  const version_row *row = NULL;
  for (int i = 0; i < N_VERSIONED && !row; i++)
    if (strcmp(version_rows[i].op, op_type) == 0) row = &version_rows[i];
  if (!row) return buf;
  enum { MAX_VERSIONS = 32 };
  int kept[MAX_VERSIONS], defined[MAX_VERSIONS];
  int n_kept = numbers(row->kept, kept, MAX_VERSIONS);
  int n_defined = numbers(row->defined, defined, MAX_VERSIONS);
  if (n_kept == 0 || n_defined == 0) return buf;
  int meant = defined[n_defined - 1];
  for (int i = 0; i < n_defined; i++)
    if (defined[i] <= opset) {
      meant = defined[i];
      break;
    }
  if (meant >= kept[0]) return buf;
  for (int i = n_kept - 1; i > 0; i--)
    if (kept[i] >= meant) {
      snprintf(buf, (size_t)cap, "%sV%d", op_type, kept[i]);
      return buf;
    }
  return buf;
}
