/* infer_elementwise.c - type inference and data propagation for the
 * elementwise ops: unary ops, broadcasting binary and variadic ops
 * (arithmetic, bitwise, comparisons, logic), Where, StringConcat.
 *
 * Owns: the per-op rules (one table row per op) and the element-by-element
 * evaluation of known inputs (value_fold.h does the arithmetic) and of
 * shape values (infer_data.h), so that shape computations such as
 * Shape -> Gather -> Mul -> Concat -> Reshape end in known shapes.
 * Cast, BitCast and the random ops live in infer_cast_random.c.
 */
#include <string.h>

#include "infer/infer.h"
#include "infer/infer_data.h"
#include "infer/value_fold.h"
#include "util/diag.h"

/* ---- checks shared by the rules ---------------------------------------- */

/* Every input in [0, n) must be present and a tensor (or not yet known). */
static o2m_status check_tensor_inputs(o2m_infer_ctx *ctx, int n) {
  if (o2m_in_count(ctx) < n)
    return o2m_infer_error(ctx, "expects %d inputs, got %d", n, o2m_in_count(ctx));
  for (int i = 0; i < n; i++) {
    o2m_status s = o2m_in_check_tensor(ctx, i);
    if (s) return s;
  }
  return O2M_OK;
}

/* The element type inputs [first, first + n) share: the first known one;
 * two different known ones are an error. */
static o2m_status shared_elem(o2m_infer_ctx *ctx, int first, int n,
                              o2m_dtype *elem) {
  *elem = O2M_DT_UNDEFINED;
  for (int i = first; i < first + n; i++) {
    o2m_dtype e = o2m_in_type(ctx, i)->elem;
    if (!e) continue;
    if (*elem && e != *elem)
      return o2m_infer_error(ctx, "inputs %d and %d must have the same element type, got %s and %s",
                             first, i, o2m_dtype_name(*elem), o2m_dtype_name(e));
    if (!*elem) *elem = e;
  }
  return O2M_OK;
}

/* Output 0: the numpy broadcast of inputs [0, n), of `elem`. */
static o2m_status set_broadcast_output(o2m_infer_ctx *ctx, int n,
                                       o2m_dtype elem) {
  const o2m_type **types = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*types));
  if (!types) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) types[i] = o2m_in_type(ctx, i);
  o2m_type out = {0};
  o2m_status s = o2m_broadcast(ctx, types, n, &out);
  if (s) return s;
  out.elem = elem;
  o2m_out_set_type(ctx, 0, &out);
  return O2M_OK;
}

/* ---- evaluating known inputs ------------------------------------------- */

/* Combines the elements (one per input) at one output position. */
typedef int (*combine_fn)(const void *rule, const o2m_num *args, int n,
                          o2m_num *out);

/* The index into `t` of output element `flat` of a broadcast to `dims`. */
static int64_t broadcast_source(const o2m_tensor *t, int rank,
                                const int64_t *dims, int64_t flat) {
  int64_t src = 0, stride = 1;
  for (int k = rank - 1; k >= 0; k--) {
    int64_t coord = flat % dims[k];
    flat /= dims[k];
    int tk = k - (rank - t->rank);
    if (tk < 0) continue;
    if (t->dims[tk] != 1) src += coord * stride;
    stride *= t->dims[tk];
  }
  return src;
}

/* The known dims of the broadcast of `in`, or -1 when they do not
 * broadcast or the result would exceed O2M_KNOWN_MAX elements. */
static int known_broadcast(o2m_infer_ctx *ctx, const o2m_tensor *const *in,
                           int n, int64_t **dims) {
  int rank = 0;
  for (int i = 0; i < n; i++)
    if (in[i]->rank > rank) rank = in[i]->rank;
  *dims = o2m_arena_array(ctx->arena, (size_t)rank + 1, sizeof(int64_t));
  if (!*dims) return -1;
  int64_t count = 1;
  for (int k = 0; k < rank; k++) {
    int64_t d = 1;
    for (int i = 0; i < n; i++) {
      int ik = k - (rank - in[i]->rank);
      if (ik < 0 || in[i]->dims[ik] == 1) continue;
      if (d != 1 && d != in[i]->dims[ik]) return -1;
      d = in[i]->dims[ik];
    }
    (*dims)[k] = d;
    if (d && count > O2M_KNOWN_MAX / d) return -1; /* checked before it could overflow */
    count *= d;
  }
  return rank;
}

/* Sets output 0's known value when inputs [0, n) are all known: each
 * element combines the inputs' elements at its broadcast position.
 * Returns non-zero when it did. */
static int fold_elements(o2m_infer_ctx *ctx, int n, o2m_dtype out_dtype,
                          combine_fn combine, const void *rule) {
  if (o2m_num_kind_of(out_dtype) == O2M_NUM_NONE) return 0;
  const o2m_tensor **in = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*in));
  o2m_num *args = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*args));
  if (!in || !args) return 0;
  for (int i = 0; i < n; i++) {
    in[i] = o2m_in_known(ctx, i);
    if (!o2m_num_readable(in[i])) return 0;
  }
  int64_t *dims;
  int rank = known_broadcast(ctx, in, n, &dims);
  if (rank < 0) return 0;
  o2m_tensor *t = o2m_tensor_new(ctx, out_dtype, rank, dims);
  if (!t) return 0;
  for (int64_t e = 0; e < t->count; e++) {
    for (int i = 0; i < n; i++)
      args[i] = o2m_num_get(in[i], broadcast_source(in[i], rank, dims, e));
    o2m_num r;
    if (!combine(rule, args, n, &r)) return 0;
    o2m_num_set(t, e, r);
  }
  o2m_out_known(ctx, 0, t);
  return 1;
}

/* ---- evaluating shape values ------------------------------------------- */

/* Shape values (infer_data.h) are entries that are known integers or
 * symbols; rank 0 or 1 only, so broadcasting is by element count. */
typedef int (*entry_combine_fn)(o2m_infer_ctx *ctx, const void *rule,
                                const o2m_dim *args, int n, o2m_dim *out);

static int entry_is(o2m_dim d, int64_t v) { return !d.sym && d.size == v; }

static int entries_same(o2m_dim a, o2m_dim b) {
  if (!a.sym || !b.sym) return !a.sym && !b.sym && a.size == b.size;
  return strcmp(a.sym, b.sym) == 0;
}

/* Sets output 0's shape value from inputs [0, n) that are each a known
 * integer value or a shape value, when at least one entry is symbolic. */
static void fold_entries(o2m_infer_ctx *ctx, int n, entry_combine_fn combine,
                         const void *rule) {
  const o2m_dim **in = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*in));
  int *len = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*len));
  o2m_dim *args = o2m_arena_array(ctx->arena, (size_t)n, sizeof(*args));
  if (!in || !len || !args) return;
  int count = 1;
  for (int i = 0; i < n; i++) {
    int rank = o2m_in_type(ctx, i)->rank;
    if (o2m_in_type(ctx, i)->kind != O2M_TYPE_TENSOR || rank < 0 || rank > 1) return;
    len[i] = o2m_shape_value_in(ctx, i, 0, &in[i]);
    if (len[i] < 0) return;
    if (len[i] == 1) continue;
    if (count != 1 && count != len[i]) return;
    count = len[i];
  }
  o2m_dim *out = o2m_arena_array(ctx->arena, (size_t)count + 1, sizeof(*out));
  if (!out) return;
  for (int e = 0; e < count; e++) {
    for (int i = 0; i < n; i++) args[i] = in[i][len[i] == 1 ? 0 : e];
    if (!combine(ctx, rule, args, n, &out[e])) return;
  }
  o2m_shape_value_out(ctx, 0, out, count);
}

/* Rules for a symbolic operand: the result when it is still determined
 * (x + 0, x * 1, ...), else a fresh symbol. */
typedef o2m_dim (*symbolic_rule)(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b);

static o2m_dim symbolic_add(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  if (entry_is(a, 0)) return b;
  if (entry_is(b, 0)) return a;
  return o2m_dim_fresh(ctx);
}

static o2m_dim symbolic_sub(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  if (entry_is(b, 0)) return a;
  if (entries_same(a, b)) return o2m_dim_known(0);
  return o2m_dim_fresh(ctx);
}

static o2m_dim symbolic_mul(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  if (entry_is(a, 0) || entry_is(b, 0)) return o2m_dim_known(0);
  if (entry_is(a, 1)) return b;
  if (entry_is(b, 1)) return a;
  return o2m_dim_fresh(ctx);
}

static o2m_dim symbolic_div(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  return entry_is(b, 1) ? a : o2m_dim_fresh(ctx);
}

static o2m_dim symbolic_max_min(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  return entries_same(a, b) ? a : o2m_dim_fresh(ctx);
}

static o2m_dim symbolic_equal(o2m_infer_ctx *ctx, o2m_dim a, o2m_dim b) {
  return entries_same(a, b) ? o2m_dim_known(1) : o2m_dim_fresh(ctx);
}

/* ---- broadcasting binary and variadic ops ------------------------------ */

typedef struct broadcast_op {
  const char *name;
  int variadic;         /* any number of inputs >= 1 (Max, Min, Sum, Mean) */
  int legacy_below;     /* versions below this broadcast only B onto A (the
                           `broadcast` attribute): the output is shaped as A */
  int unidirectional;   /* the output is shaped as the first input (PRelu) */
  int bool_out;         /* comparisons and logic */
  int own_types;        /* the second input has its own element type (Pow) */
  int mean;             /* the folded sum is divided by the input count */
  o2m_num_binary_fn fold;
  symbolic_rule symbolic; /* NULL: no shape-value propagation */
} broadcast_op;

static const broadcast_op broadcast_ops[] = {
    {.name = "Add", .legacy_below = 7, .fold = o2m_num_add, .symbolic = symbolic_add},
    {.name = "Sub", .legacy_below = 7, .fold = o2m_num_sub, .symbolic = symbolic_sub},
    {.name = "Mul", .legacy_below = 7, .fold = o2m_num_mul, .symbolic = symbolic_mul},
    {.name = "Div", .legacy_below = 7, .fold = o2m_num_div, .symbolic = symbolic_div},
    {.name = "Pow", .legacy_below = 7, .own_types = 1, .fold = o2m_num_pow},
    {.name = "Mod", .fold = o2m_num_mod_floor},       /* fmod=1: mod_trunc */
    {.name = "BitShift", .fold = o2m_num_shift_left}, /* RIGHT: shift_right */
    {.name = "BitwiseAnd", .fold = o2m_num_bit_and},
    {.name = "BitwiseOr", .fold = o2m_num_bit_or},
    {.name = "BitwiseXor", .fold = o2m_num_bit_xor},
    {.name = "PRelu", .unidirectional = 1},
    {.name = "Max", .variadic = 1, .fold = o2m_num_max, .symbolic = symbolic_max_min},
    {.name = "Min", .variadic = 1, .fold = o2m_num_min, .symbolic = symbolic_max_min},
    {.name = "Sum", .variadic = 1, .fold = o2m_num_add, .symbolic = symbolic_add},
    {.name = "Mean", .variadic = 1, .mean = 1, .fold = o2m_num_add},
    {.name = "And", .legacy_below = 7, .bool_out = 1, .fold = o2m_num_and},
    {.name = "Or", .legacy_below = 7, .bool_out = 1, .fold = o2m_num_or},
    {.name = "Xor", .legacy_below = 7, .bool_out = 1, .fold = o2m_num_xor},
    {.name = "Equal", .legacy_below = 7, .bool_out = 1, .fold = o2m_num_equal,
     .symbolic = symbolic_equal},
    {.name = "Less", .legacy_below = 7, .bool_out = 1, .fold = o2m_num_less},
    {.name = "Greater", .legacy_below = 7, .bool_out = 1, .fold = o2m_num_greater},
    {.name = "LessOrEqual", .bool_out = 1, .fold = o2m_num_less_equal},
    {.name = "GreaterOrEqual", .bool_out = 1, .fold = o2m_num_greater_equal},
    {.name = "StringConcat"},
};

/* The element function, after the attributes that choose it: Mod's
 * `fmod` and BitShift's `direction`. */
typedef struct broadcast_rule {
  const broadcast_op *op;
  o2m_num_binary_fn fold;
} broadcast_rule;

static o2m_status choose_rule(o2m_infer_ctx *ctx, const broadcast_op *op,
                              broadcast_rule *rule) {
  rule->op = op;
  rule->fold = op->fold;
  if (op->fold == o2m_num_mod_floor) {
    int64_t fmod = o2m_attr_int(ctx, "fmod", 0);
    if (fmod != 0 && fmod != 1)
      return o2m_infer_error(ctx, "fmod must be 0 or 1, not %lld", (long long)fmod);
    if (fmod) rule->fold = o2m_num_mod_trunc;
  } else if (op->fold == o2m_num_shift_left) {
    const char *direction = o2m_attr_string(ctx, "direction", "");
    if (strcmp(direction, "RIGHT") == 0) rule->fold = o2m_num_shift_right;
    else if (strcmp(direction, "LEFT") != 0)
      return o2m_infer_error(ctx, "direction must be LEFT or RIGHT, not '%s'", direction);
  }
  return O2M_OK;
}

static int combine_broadcast(const void *rule_ptr, const o2m_num *args, int n,
                             o2m_num *out) {
  const broadcast_rule *rule = rule_ptr;
  o2m_num acc = args[0];
  for (int i = 1; i < n; i++)
    if (!rule->fold(acc, args[i], &acc)) return 0;
  if (rule->op->mean) {
    if (acc.kind != O2M_NUM_FLOAT) return 0;
    acc.f /= n;
  }
  *out = acc;
  return 1;
}

static int combine_broadcast_entries(o2m_infer_ctx *ctx, const void *rule_ptr,
                                     const o2m_dim *args, int n, o2m_dim *out) {
  const broadcast_rule *rule = rule_ptr;
  o2m_dim acc = args[0];
  for (int i = 1; i < n; i++) {
    if (acc.sym || args[i].sym) {
      acc = rule->op->symbolic(ctx, acc, args[i]);
      continue;
    }
    o2m_num a = {O2M_NUM_INT, 0, acc.size}, b = {O2M_NUM_INT, 0, args[i].size}, r;
    if (!rule->fold(a, b, &r)) return 0;
    acc = o2m_dim_known(r.i);
  }
  *out = acc;
  return 1;
}

static const broadcast_op *find_broadcast_op(const char *name) {
  for (size_t i = 0; i < sizeof(broadcast_ops) / sizeof(broadcast_ops[0]); i++)
    if (strcmp(broadcast_ops[i].name, name) == 0) return &broadcast_ops[i];
  return NULL;
}

o2m_status o2m_infer_broadcast(o2m_infer_ctx *ctx) {
  const broadcast_op *op = find_broadcast_op(ctx->node->op_type);
  if (!op) return o2m_infer_unsupported(ctx, "no broadcasting rule for this op");
  int n = o2m_in_count(ctx);
  if (op->variadic ? n < 1 : n != 2)
    return o2m_infer_error(ctx, "expects %s inputs, got %d", op->variadic ? "1 or more" : "2", n);
  broadcast_rule rule;
  o2m_dtype elem = O2M_DT_UNDEFINED;
  o2m_status s = check_tensor_inputs(ctx, n);
  if (!s) s = choose_rule(ctx, op, &rule);
  if (!s) s = shared_elem(ctx, 0, op->own_types ? 1 : n, &elem);
  if (s) return s;
  o2m_dtype out_elem = op->bool_out ? O2M_DT_BOOL : elem;

  if (op->unidirectional || ctx->op_version < op->legacy_below) {
    o2m_out_shaped_like(ctx, 0, out_elem, o2m_in_type(ctx, 0));
    return O2M_OK;
  }
  s = set_broadcast_output(ctx, n, out_elem);
  if (s || !op->fold) return s;
  if (!fold_elements(ctx, n, out_elem, combine_broadcast, &rule) &&
      op->symbolic && o2m_dtype_is_int(out_elem))
    fold_entries(ctx, n, combine_broadcast_entries, &rule);
  return O2M_OK;
}

/* ---- Where ------------------------------------------------------------- */

static int combine_where(const void *rule, const o2m_num *args, int n,
                         o2m_num *out) {
  *out = args[0].i ? args[1] : args[2];
  return 1;
}

static int combine_where_entries(o2m_infer_ctx *ctx, const void *rule,
                                 const o2m_dim *args, int n, o2m_dim *out) {
  if (!args[0].sym) *out = args[0].size ? args[1] : args[2];
  else *out = entries_same(args[1], args[2]) ? args[1] : o2m_dim_fresh(ctx);
  return 1;
}

o2m_status o2m_infer_where(o2m_infer_ctx *ctx) {
  o2m_dtype elem = O2M_DT_UNDEFINED;
  o2m_status s = check_tensor_inputs(ctx, 3);
  if (!s) s = shared_elem(ctx, 1, 2, &elem);
  if (s) return s;
  o2m_dtype cond = o2m_in_type(ctx, 0)->elem;
  if (cond && cond != O2M_DT_BOOL)
    return o2m_infer_error(ctx, "the condition must be bool, not %s", o2m_dtype_name(cond));
  s = set_broadcast_output(ctx, 3, elem);
  if (s) return s;
  if (!fold_elements(ctx, 3, elem, combine_where, NULL) && o2m_dtype_is_int(elem))
    fold_entries(ctx, 3, combine_where_entries, NULL);
  return O2M_OK;
}

/* ---- unary ops ----------------------------------------------------------
 * Every unary op's output has its input's shape; by default also its
 * element type. Rows list the ops that differ or that are evaluated on
 * known inputs. */

typedef struct unary_op {
  const char *name;
  int bool_out;
  o2m_num_unary_fn fold;
} unary_op;

static const unary_op unary_ops[] = {
    {"Abs", 0, o2m_num_abs},
    {"Neg", 0, o2m_num_neg},
    {"Sign", 0, o2m_num_sign},
    {"Relu", 0, o2m_num_relu},
    {"Not", 0, o2m_num_not},
    {"BitwiseNot", 0, o2m_num_bit_not},
    {"Sqrt", 0, o2m_num_sqrt},
    {"Ceil", 0, o2m_num_ceil},
    {"Floor", 0, o2m_num_floor},
    {"Round", 0, o2m_num_round},
    {"Reciprocal", 0, o2m_num_reciprocal},
    {"IsInf", 1, NULL},
    {"IsNaN", 1, NULL},
    {"RegexFullMatch", 1, NULL},
};

static int combine_unary(const void *fold, const o2m_num *args, int n,
                         o2m_num *out) {
  return ((const unary_op *)fold)->fold(args[0], out);
}

o2m_status o2m_infer_unary(o2m_infer_ctx *ctx) {
  o2m_status s = check_tensor_inputs(ctx, 1);
  if (s) return s;
  const unary_op *op = NULL;
  for (size_t i = 0; i < sizeof(unary_ops) / sizeof(unary_ops[0]); i++)
    if (strcmp(unary_ops[i].name, ctx->node->op_type) == 0) op = &unary_ops[i];
  const o2m_type *in = o2m_in_type(ctx, 0);
  o2m_dtype elem = op && op->bool_out ? O2M_DT_BOOL : in->elem;
  o2m_out_shaped_like(ctx, 0, elem, in);
  if (op && op->fold) fold_elements(ctx, 1, elem, combine_unary, op);
  return O2M_OK;
}
