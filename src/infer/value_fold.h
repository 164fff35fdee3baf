/* value_fold.h - element arithmetic for data propagation in the
 * elementwise and reduce families: reading and writing one element of a
 * known tensor as a number, and the per-element operations (Add, Div, Mod,
 * comparisons, ...) with ONNX's integer semantics.
 *
 * Owns: numbers only. Walking tensors (broadcasting, reduction) belongs to
 * the inference functions that use these; nothing here allocates.
 */
#ifndef O2M_VALUE_FOLD_H
#define O2M_VALUE_FOLD_H

#include "infer/infer.h"

/* How the elements of a dtype compute. UINT is uint64 only: narrower
 * unsigned types fit int64 and compute as INT. */
typedef enum o2m_num_kind {
  O2M_NUM_NONE = 0, /* elements not readable here (string, complex, float8, 4-bit) */
  O2M_NUM_FLOAT,
  O2M_NUM_INT,
  O2M_NUM_UINT
} o2m_num_kind;

/* One element: `f` for FLOAT, `i` for INT, the bit pattern of a uint64 in
 * `i` for UINT. */
typedef struct o2m_num {
  o2m_num_kind kind;
  double f;
  int64_t i;
} o2m_num;

o2m_num_kind o2m_num_kind_of(o2m_dtype dtype);
/* Non-zero when `t` is a known tensor whose elements can be read here and
 * that is small enough to compute with (<= O2M_KNOWN_MAX elements). */
int o2m_num_readable(const o2m_tensor *t);
o2m_num o2m_num_get(const o2m_tensor *t, int64_t index);
/* Stores `v` converted to t's dtype (float to integer truncates toward
 * zero, integers wrap to the width of the dtype). */
void o2m_num_set(o2m_tensor *t, int64_t index, o2m_num v);
/* `v` converted to `kind` (FLOAT, INT or UINT). */
o2m_num o2m_num_to(o2m_num v, o2m_num_kind kind);
o2m_num o2m_num_bool(int v);

/* Per-element operations. Both operands have the same kind (callers
 * convert with o2m_num_to); the result has that kind, except comparisons
 * and logic, which return booleans (kind INT, 0 or 1). They return 0 when
 * the result is undefined (integer division by zero, a float-only op on
 * integers), which leaves the output's value unknown. */
typedef int (*o2m_num_binary_fn)(o2m_num a, o2m_num b, o2m_num *out);
typedef int (*o2m_num_unary_fn)(o2m_num a, o2m_num *out);

int o2m_num_add(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_sub(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_mul(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_div(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_mod_floor(o2m_num a, o2m_num b, o2m_num *out); /* sign of b */
int o2m_num_mod_trunc(o2m_num a, o2m_num b, o2m_num *out); /* sign of a */
int o2m_num_pow(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_max(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_min(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_bit_and(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_bit_or(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_bit_xor(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_shift_left(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_shift_right(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_and(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_or(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_xor(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_equal(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_less(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_less_equal(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_greater(o2m_num a, o2m_num b, o2m_num *out);
int o2m_num_greater_equal(o2m_num a, o2m_num b, o2m_num *out);

int o2m_num_neg(o2m_num a, o2m_num *out);
int o2m_num_abs(o2m_num a, o2m_num *out);
int o2m_num_sign(o2m_num a, o2m_num *out);
int o2m_num_relu(o2m_num a, o2m_num *out);
int o2m_num_not(o2m_num a, o2m_num *out);
int o2m_num_bit_not(o2m_num a, o2m_num *out);
/* float-only: */
int o2m_num_sqrt(o2m_num a, o2m_num *out);
int o2m_num_ceil(o2m_num a, o2m_num *out);
int o2m_num_floor(o2m_num a, o2m_num *out);
int o2m_num_round(o2m_num a, o2m_num *out); /* half to even */
int o2m_num_reciprocal(o2m_num a, o2m_num *out);

#endif
