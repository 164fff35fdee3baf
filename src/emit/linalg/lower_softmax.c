/* lower_softmax.c - the Linalg lowerings of Softmax, LogSoftmax and
 * Hardmax, built from the reduction builders (lower_reduce.h).
 *
 * The core form (opset >= 13) normalizes over one axis (default -1); the
 * transform layer rewrites the older 2-D coerced form. Softmax is
 * exp(x - max) / sum(exp(x - max)) and LogSoftmax (x - max) -
 * log(sum(exp(x - max))), as the reference; f16/bf16 compute in f32 and
 * round once (numpy's half reductions accumulate in f32 too). For the JIT
 * (O2M_JIT_KERNELS), float32 along the last axis is one call of the
 * runtime's O2M_SOFTMAX_CALL (rt_softmax.c: vector passes where the sum's
 * reduction would stay scalar). */

#include "emit/emit.h"
#include "emit/linalg/lower.h"
#include "emit/linalg/lower_reduce.h"
#include "runtime/rt_abi.h"

enum { MAX_RANK = LW_MAX_REDUCE_RANK };

typedef struct softmax_step {
  o2m_dtype in_dt, dt; /* the input's dtype, the one computed in */
  int log;             /* LogSoftmax */
} softmax_step;

/* x in the dtype computed in */
static MlirValue widened(lw_ctx *cx, const softmax_step *st, MlirValue x) {
  return lw_scalar_cast(cx, x, st->in_dt, st->dt);
}

/* args: x, accumulator. The max only shifts the exps, so it may skip NaNs
 * (arith.maxnumf, whose reduction LLVM vectorizes; Max's maximumf it does
 * not): a NaN in the row still makes its exp, the sum and every output
 * NaN, as the reference's NaN max does. */
static o2m_status max_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const softmax_step *st = user;
  MlirValue ops[2] = {args[1], widened(cx, st, args[0])};
  *result = lw_op1(cx, "arith.maxnumf", 2, ops, mlirValueGetType(args[1]), NULL);
  return lw_value_status(cx, *result);
}

/* args: x, max, accumulator */
static o2m_status sum_exp_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const softmax_step *st = user;
  MlirValue shifted = lw_scalar_op2(cx, "Sub", st->dt, widened(cx, st, args[0]), args[1]);
  *result = lw_scalar_op2(cx, "Add", st->dt, args[2], lw_scalar_op1(cx, "Exp", st->dt, shifted));
  return lw_value_status(cx, *result);
}

/* args: x, max, sum of exps (broadcast) */
static o2m_status normalize_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const softmax_step *st = user;
  MlirValue shifted = lw_scalar_op2(cx, "Sub", st->dt, widened(cx, st, args[0]), args[1]);
  MlirValue y = st->log ? lw_scalar_op2(cx, "Sub", st->dt, shifted, lw_scalar_op1(cx, "Log", st->dt, args[2]))
                        : lw_scalar_op2(cx, "Div", st->dt, lw_scalar_op1(cx, "Exp", st->dt, shifted), args[2]);
  *result = mlirValueIsNull(y) ? y : lw_scalar_cast(cx, y, st->dt, st->in_dt);
  return lw_value_status(cx, *result);
}

/* The normalized axis of input 0, and as a mask. */
/* Input 0 (*x, of rank *rank) and the axis the op works along. */
static o2m_status softmax_input(lw_ctx *cx, MlirValue *x, int *rank, int *axis, unsigned char *reduced) {
  *x = lw_in(cx, 0);
  if (mlirValueIsNull(*x)) return lw_unsupported(cx, "input is missing or not a tensor");
  int r = *rank = (int)mlirShapedTypeGetRank(mlirValueGetType(*x));
  if (r > MAX_RANK) return lw_unsupported(cx, "rank above %d", MAX_RANK);
  if (cx->node->opset < 13) return lw_unsupported(cx, "the opset < 13 form (the transform layer normalizes it)");
  if (r == 0) return lw_unsupported(cx, "a scalar input");
  int64_t a = lw_attr_int(cx, "axis", -1);
  *axis = (int)(a < 0 ? a + r : a);
  return lw_axes_mask(cx, r, 1, &a, reduced);
}

/* The runtime's kernel on float32 x along its last axis. */
static o2m_status softmax_call(lw_ctx *cx, MlirValue x, int rank, int log) {
  static const char f32_any[] = "memref<*xf32>";
  int64_t sizes[MAX_RANK];
  MlirValue dims[MAX_RANK];
  for (int d = 0; d < rank; d++) {
    sizes[d] = mlirShapedTypeGetDimSize(mlirValueGetType(x), d);
    dims[d] = mlirShapedTypeIsDynamicSize(sizes[d]) ? lw_dim(cx, x, d) : (MlirValue){NULL};
  }
  MlirType f32 = lw_elem_type(cx, O2M_DT_FLOAT);
  MlirValue y = lw_kernel_result(cx, f32, rank, sizes, dims);
  MlirValue args[3] = {lw_kernel_operand(cx, x, f32_any),
                       mlirValueIsNull(y) ? y : lw_op1(cx, "memref.cast", 1, &y, lw_type(cx, f32_any), NULL),
                       lw_const_scalar(cx, O2M_DT_INT64, log)};
  return lw_call_kernel_for_out(cx, O2M_SOFTMAX_CALL, "(memref<*xf32>, memref<*xf32>, i64) -> ()", 3, args, y,
                                mlirRankedTensorTypeGet(rank, sizes, f32, mlirAttributeGetNull()), "Softmax");
}

static o2m_status lower_softmax_common(lw_ctx *cx, int log) {
  MlirValue x;
  int rank = 0, axis = 0;
  unsigned char reduced[MAX_RANK];
  o2m_status s = softmax_input(cx, &x, &rank, &axis, reduced);
  if (s) return s;
  o2m_dtype in_dt = lw_in_type(cx, 0)->elem;
  if ((cx->for_jit & O2M_JIT_KERNELS) && in_dt == O2M_DT_FLOAT && axis == rank - 1) return softmax_call(cx, x, rank, log);
  int half = in_dt == O2M_DT_FLOAT16 || in_dt == O2M_DT_BFLOAT16;
  softmax_step st = {in_dt, half ? O2M_DT_FLOAT : in_dt, log};
  if (!lw_dtype_is_float(in_dt)) return lw_unsupported(cx, "dtype %s", o2m_dtype_name(in_dt));
  MlirValue ins[3] = {x, {NULL}, {NULL}};
  unsigned char in_reduced[2] = {0, 1};
  lw_reduce_spec spec = {rank, reduced, 1, ins, in_reduced, lw_extreme_const(cx, st.dt, 0), max_body, &st};
  if ((s = lw_reduce(cx, &spec, &ins[1]))) return s;
  spec.n_in = 2;
  spec.init = lw_const_scalar(cx, st.dt, 0);
  spec.body = sum_exp_body;
  if ((s = lw_reduce(cx, &spec, &ins[2]))) return s;
  ins[1] = lw_keep_dims(cx, ins[1], rank, reduced);
  ins[2] = lw_keep_dims(cx, ins[2], rank, reduced);
  MlirValue y;
  s = lw_broadcast(cx, 3, ins, lw_out_type(cx, 0), lw_elem_type(cx, in_dt), normalize_body, &st, &y);
  return s ? s : lw_set_out(cx, 0, y);
}

o2m_status lw_lower_softmax(lw_ctx *cx) { return lower_softmax_common(cx, 0); }
o2m_status lw_lower_log_softmax(lw_ctx *cx) { return lower_softmax_common(cx, 1); }

/* ---- Hardmax ------------------------------------------------------------------- */

typedef struct hardmax_step {
  int axis;
  MlirType elem;
} hardmax_step;

/* args: x (only its position matters), the index of the max along the axis */
static o2m_status one_hot_body(lw_ctx *cx, const MlirValue *args, MlirValue *result, void *user) {
  const hardmax_step *st = user;
  MlirValue i = lw_loop_index_i64(cx, st->axis);
  *result = lw_select(cx, lw_cmpi(cx, LW_I_EQ, i, args[1]), lw_scalar_const(cx, st->elem, 1),
                      lw_scalar_const(cx, st->elem, 0));
  return O2M_OK;
}

/* 1 at the first max along the axis, 0 elsewhere */
o2m_status lw_lower_hardmax(lw_ctx *cx) {
  MlirValue x;
  int rank = 0, axis = 0;
  unsigned char reduced[MAX_RANK];
  o2m_status s = softmax_input(cx, &x, &rank, &axis, reduced);
  if (s) return s;
  o2m_dtype dt = lw_in_type(cx, 0)->elem;
  hardmax_step st = {axis, lw_elem_type(cx, dt)};
  MlirValue ins[2] = {x, {NULL}};
  if ((s = lw_arg_reduce(cx, x, dt, axis, 1, 0, &ins[1]))) return s;
  ins[1] = lw_keep_dims(cx, ins[1], rank, reduced);
  MlirValue y;
  s = lw_broadcast(cx, 2, ins, lw_out_type(cx, 0), st.elem, one_hot_body, &st, &y);
  return s ? s : lw_set_out(cx, 0, y);
}
