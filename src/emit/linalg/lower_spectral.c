/* lower_spectral.c - Linalg lowerings of DFT (opset 17: `axis` attribute;
 * opset 20: `axis` input) and STFT (opset 17) (rows in lower_nn.def).
 *
 * Both are a direct O(n^2) transform: one linalg.generic whose loops are
 * the output's dims plus one reduction loop over the input samples (or
 * frequencies). The body computes the twiddle angle 2*pi*((o*r) mod L)/L
 * from linalg.index in integer then f64 arithmetic (reduced to a
 * quadrant, so that multiples of pi/2 are exact), multiplies the
 * (real, imaginary) input pair by cos/sin and accumulates in f64; the
 * result is converted back to the input's dtype. Semantics follow ONNX's
 * reference (onnx/reference/ops/op_dft.py, op_stft.py):
 * - DFT forward: y[k] = sum_{n < min(N, L)} x[n] e^{-2 pi i k n / L}, the
 *   signal zero-padded or truncated to dft_length L; onesided keeps the
 *   first L/2 + 1 bins.
 * - DFT inverse: (1/L) sum_k X[k] e^{+2 pi i k n / L}; onesided inverse is
 *   numpy's irfft: the first L/2 + 1 bins are the half of a Hermitian
 *   spectrum, the result is real (last dim 1).
 * - STFT: frames x[b, f * step + n] (n < frame_length), weighted by the
 *   window, each transformed forward (onesided by default).
 * The parameter inputs (dft_length, axis, frame_step, frame_length) must
 * be known at import (`run`/`test` specialize them); the transformed axis
 * must be static.
 */
#include <math.h>

#include "emit/linalg/lower_elementwise.h"
#include "emit/linalg/lower_window.h"

/* What the body computes. */
typedef struct dft_body {
  int o_dim, r_dim, c_dim; /* loops: output position, reduction, component */
  int64_t length;          /* L */
  double sign;             /* -1 forward, +1 inverse */
  double scale;            /* 1 or 1/L */
  int irfft;               /* real output from a one-sided spectrum */
  int has_imag, has_window;
  o2m_dtype x_dtype, w_dtype;
} dft_body;

static MlirValue fop(lw_ctx *cx, const char *name, MlirValue a, MlirValue b) {
  MlirValue ops[2] = {a, b};
  return lw_op1(cx, name, 2, ops, mlirValueGetType(a), NULL);
}

static MlirValue fop1(lw_ctx *cx, const char *name, MlirValue a) {
  return lw_op1(cx, name, 1, &a, mlirValueGetType(a), NULL);
}

static o2m_status body_fn(lw_ctx *cx, const MlirValue *args, MlirValue *yields, void *user) {
  const dft_body *b = user;
  MlirType f64 = lw_elem_type(cx, O2M_DT_DOUBLE), i64 = lw_elem_type(cx, O2M_DT_INT64);
  int a = 0;
  MlirValue xr = lw_scalar_cast(cx, args[a++], b->x_dtype, O2M_DT_DOUBLE);
  MlirValue xi = b->has_imag ? lw_scalar_cast(cx, args[a++], b->x_dtype, O2M_DT_DOUBLE)
                             : lw_scalar_const(cx, f64, 0.0);
  if (b->has_window) {
    MlirValue w = lw_scalar_cast(cx, args[a++], b->w_dtype, O2M_DT_DOUBLE);
    xr = fop(cx, "arith.mulf", xr, w);
    xi = fop(cx, "arith.mulf", xi, w);
  }
  MlirValue acc = args[a];
  MlirValue o = lw_loop_index_i64(cx, b->o_dim), r = lw_loop_index_i64(cx, b->r_dim);
  MlirValue prod = fop(cx, "arith.muli", o, r);
  prod = fop(cx, "arith.remsi", prod, lw_scalar_const(cx, i64, (double)b->length));
  /* theta = 2 pi prod / L = q * pi/2 + phi with phi in [0, pi/2): exact
   * values at the multiples of pi/2 */
  MlirValue len = lw_scalar_const(cx, i64, (double)b->length);
  MlirValue j = fop(cx, "arith.muli", prod, lw_scalar_const(cx, i64, 4.0));
  MlirValue q = fop(cx, "arith.divsi", j, len);
  MlirValue rem = fop(cx, "arith.subi", j, fop(cx, "arith.muli", q, len));
  MlirValue phi = lw_op1(cx, "arith.sitofp", 1, &rem, f64, NULL);
  phi = fop(cx, "arith.mulf", phi, lw_scalar_const(cx, f64, M_PI / 2.0 / (double)b->length));
  MlirValue c0 = fop1(cx, "math.cos", phi), s0 = fop1(cx, "math.sin", phi);
  MlirValue one = lw_scalar_const(cx, i64, 1.0);
  MlirValue odd = lw_cmpi(cx, LW_I_EQ, fop(cx, "arith.andi", q, one), one);
  MlirValue half = lw_cmpi(cx, LW_I_SGE, q, lw_scalar_const(cx, i64, 2.0));
  MlirValue c = lw_select(cx, odd, fop1(cx, "arith.negf", s0), c0);
  MlirValue s = lw_select(cx, odd, c0, s0);
  c = lw_select(cx, half, fop1(cx, "arith.negf", c), c);
  s = lw_select(cx, half, fop1(cx, "arith.negf", s), s);
  MlirValue term;
  if (b->irfft) {
    /* 2 * Re(X[r] e^{i theta}) for the bins that stand for a pair */
    MlirValue re = fop(cx, "arith.subf", fop(cx, "arith.mulf", xr, c), fop(cx, "arith.mulf", xi, s));
    MlirValue zero = lw_scalar_const(cx, i64, 0.0);
    MlirValue r2 = fop(cx, "arith.addi", r, r);
    MlirValue single = lw_op1(cx, "arith.ori", 2,
                              (MlirValue[]){lw_cmpi(cx, LW_I_EQ, r, zero),
                                            lw_cmpi(cx, LW_I_EQ, r2, lw_scalar_const(cx, i64, (double)b->length))},
                              lw_type(cx, "i1"), NULL);
    MlirValue w = lw_select(cx, single, lw_scalar_const(cx, f64, 1.0), lw_scalar_const(cx, f64, 2.0));
    term = fop(cx, "arith.mulf", re, w);
  } else {
    MlirValue ss = fop(cx, "arith.mulf", s, lw_scalar_const(cx, f64, b->sign));
    MlirValue re = fop(cx, "arith.subf", fop(cx, "arith.mulf", xr, c), fop(cx, "arith.mulf", xi, ss));
    MlirValue im = fop(cx, "arith.addf", fop(cx, "arith.mulf", xi, c), fop(cx, "arith.mulf", xr, ss));
    MlirValue comp = lw_loop_index_i64(cx, b->c_dim);
    term = lw_select(cx, lw_cmpi(cx, LW_I_EQ, comp, lw_scalar_const(cx, i64, 0.0)), re, im);
  }
  if (b->scale != 1.0) term = fop(cx, "arith.mulf", term, lw_scalar_const(cx, f64, b->scale));
  yields[0] = fop(cx, "arith.addf", acc, term);
  return lw_value_status(cx, yields[0]);
}

/* Runs the transform generic: `n_loops` loops (all parallel but the last,
 * the reduction), inputs ins/in_maps, an f64 output of `rank` dims (sizes,
 * dynamic ones in dyn) mapped by the identity on the first `rank` loops;
 * the result converted to `dtype` is set as output 0. */
static o2m_status run_transform(lw_ctx *cx, const dft_body *b, int n_loops, int n_ins,
                                const MlirValue *ins, const MlirAttribute *in_maps, int rank,
                                const int64_t *sizes, const MlirValue *dyn, o2m_dtype dtype) {
  char iters[LW_MAX_RANK + 2];
  for (int l = 0; l < n_loops; l++) iters[l] = l < n_loops - 1 ? 'p' : 'r';
  iters[n_loops] = 0;
  MlirType f64 = lw_elem_type(cx, O2M_DT_DOUBLE);
  MlirType type = mlirRankedTensorTypeGet(rank, sizes, f64, mlirAttributeGetNull());
  MlirValue init = lw_filled(cx, type, dyn, lw_scalar_const(cx, f64, 0.0));
  MlirAttribute out_map = lw_identity_map(cx, rank);
  if (rank != n_loops) {
    int exprs[LW_MAX_RANK];
    for (int k = 0; k < rank; k++) exprs[k] = k;
    out_map = lw_affine_map(cx, n_loops, rank, exprs);
  }
  lw_generic_spec spec = {n_loops, iters, n_ins, 1, ins, in_maps, &init, &out_map,
                          body_fn, (void *)b};
  MlirValue y;
  o2m_status s = lw_generic(cx, &spec, &y);
  if (s) return s;
  MlirValue out;
  if ((s = lw_convert(cx, y, O2M_DT_DOUBLE, dtype, &out))) return s;
  return lw_set_out(cx, 0, out);
}

/* A known scalar integer input (lw_unsupported when not known). */
static o2m_status known_scalar(lw_ctx *cx, int i, const char *what, int64_t *v) {
  int64_t *vals = NULL;
  int64_t n = lw_in_known_ints(cx, i, &vals);
  if (n != 1) return lw_unsupported(cx, "%s is not known at import", what);
  *v = vals[0];
  return O2M_OK;
}

static int float_dtype_ok(o2m_dtype d) {
  return d == O2M_DT_FLOAT || d == O2M_DT_DOUBLE || d == O2M_DT_FLOAT16 || d == O2M_DT_BFLOAT16;
}

o2m_status lw_lower_dft(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  const o2m_type *xt = lw_in_type(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "the input is missing");
  o2m_dtype dt = xt->elem;
  if (!float_dtype_ok(dt)) return lw_unsupported(cx, "a DFT of dtype %d", (int)dt);
  int rank = lw_rank(x);
  if (rank < 2 || rank > LW_MAX_RANK - 2) return lw_unsupported(cx, "an input of rank %d", rank);
  int inverse = lw_attr_int(cx, "inverse", 0) != 0, onesided = lw_attr_int(cx, "onesided", 0) != 0;
  int64_t axis = -2;
  o2m_status st;
  if (cx->node->opset < 20) axis = lw_attr_int(cx, "axis", 1);
  else if (lw_in_present(cx, 2) && (st = known_scalar(cx, 2, "axis", &axis))) return st;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) return lw_error(cx, "axis %lld is not a signal axis", (long long)axis);
  int64_t n_in = lw_static_dim(x, (int)axis), comps = lw_static_dim(x, rank - 1);
  if (n_in < 0) return lw_unsupported(cx, "a dynamic signal axis");
  if (comps != 1 && comps != 2) return lw_unsupported(cx, "a last dim that is not a static 1 or 2");
  int64_t length = inverse && onesided ? 2 * (n_in - 1) : n_in;
  if (lw_in_present(cx, 1) && (st = known_scalar(cx, 1, "dft_length", &length))) return st;
  if (length < 1) return lw_error(cx, "dft_length %lld is not positive", (long long)length);
  int irfft = inverse && onesided;
  int64_t n_used = irfft ? length / 2 + 1 : length;
  if (n_used > n_in) n_used = n_in;
  int64_t out_len = onesided && !inverse ? length / 2 + 1 : length;
  if (n_used < 1) return lw_error(cx, "an empty signal axis");
  if (n_used < n_in) { /* truncate */
    lw_ix off[LW_MAX_RANK], sz[LW_MAX_RANK];
    for (int k = 0; k < rank; k++) {
      off[k] = lw_ix_c(0);
      sz[k] = k == axis ? lw_ix_c(n_used) : lw_ix_dim(cx, x, k);
    }
    x = lw_extract_slice(cx, x, off, sz, NULL);
    if (mlirValueIsNull(x)) return lw_value_status(cx, x);
  }
  /* loops: the output's dims (the last: the component), then r */
  int n_loops = rank + 1;
  lw_aff re_map[LW_MAX_RANK], im_map[LW_MAX_RANK];
  for (int k = 0; k < rank - 1; k++) re_map[k] = im_map[k] = lw_aff_dim(k == axis ? rank : k);
  re_map[rank - 1] = lw_aff_const(0);
  im_map[rank - 1] = lw_aff_const(1);
  MlirValue ins[2] = {x, x};
  MlirAttribute maps[2] = {lw_aff_map(cx, n_loops, rank, re_map), lw_aff_map(cx, n_loops, rank, im_map)};
  int64_t sizes[LW_MAX_RANK];
  MlirValue dyn[LW_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    dyn[k] = (MlirValue){NULL};
    if (k == axis) sizes[k] = out_len;
    else if (k == rank - 1) sizes[k] = irfft ? 1 : 2;
    else {
      sizes[k] = lw_static_dim(x, k);
      if (sizes[k] < 0) sizes[k] = mlirShapedTypeGetDynamicSize(), dyn[k] = lw_dim(cx, x, k);
    }
  }
  dft_body b = {(int)axis, rank, rank - 1, length, inverse ? 1.0 : -1.0,
                inverse ? 1.0 / (double)length : 1.0, irfft, comps == 2, 0, dt, dt};
  return run_transform(cx, &b, n_loops, comps == 2 ? 2 : 1, ins, maps, rank, sizes, dyn, dt);
}

o2m_status lw_lower_stft(lw_ctx *cx) {
  MlirValue x = lw_in(cx, 0);
  const o2m_type *xt = lw_in_type(cx, 0);
  if (mlirValueIsNull(x)) return lw_error(cx, "the signal is missing");
  o2m_dtype dt = xt->elem;
  if (!float_dtype_ok(dt)) return lw_unsupported(cx, "an STFT of dtype %d", (int)dt);
  if (lw_rank(x) != 3) return lw_error(cx, "the signal must have rank 3");
  int onesided = lw_attr_int(cx, "onesided", 1) != 0;
  int64_t step = 0, frame = -1;
  o2m_status st;
  if ((st = known_scalar(cx, 1, "frame_step", &step))) return st;
  MlirValue w = lw_in_present(cx, 2) ? lw_in(cx, 2) : (MlirValue){NULL};
  int64_t samples = lw_static_dim(x, 1), comps = lw_static_dim(x, 2);
  if (samples < 0) return lw_unsupported(cx, "a dynamic signal length");
  if (comps != 1 && comps != 2) return lw_unsupported(cx, "a last dim that is not a static 1 or 2");
  if (lw_in_present(cx, 3)) {
    if ((st = known_scalar(cx, 3, "frame_length", &frame))) return st;
  } else if (!mlirValueIsNull(w)) {
    frame = lw_static_dim(w, 0);
    if (frame < 0) return lw_unsupported(cx, "a window of dynamic length");
  } else {
    frame = samples;
  }
  if (!mlirValueIsNull(w) && lw_static_dim(w, 0) != frame)
    return lw_unsupported(cx, "a window whose length is not frame_length");
  if (step < 1 || frame < 1 || frame > samples)
    return lw_error(cx, "frame_step %lld / frame_length %lld do not fit %lld samples",
                    (long long)step, (long long)frame, (long long)samples);
  o2m_dtype wdt = dt;
  if (mlirValueIsNull(w)) {
    w = lw_filled(cx, lw_tensor_type_of(cx, dt, 1, &frame), NULL, lw_scalar_const(cx, lw_elem_type(cx, dt), 1.0));
  } else {
    wdt = lw_in_type(cx, 2)->elem;
    if (!float_dtype_ok(wdt)) return lw_unsupported(cx, "a window of dtype %d", (int)wdt);
  }
  int64_t frames = (samples - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
  /* loops: b, f, k, c, n */
  lw_aff re_map[3] = {lw_aff_dim(0), lw_aff_2(1, step, 4, 1, 0), lw_aff_const(0)};
  lw_aff im_map[3] = {lw_aff_dim(0), lw_aff_2(1, step, 4, 1, 0), lw_aff_const(1)};
  lw_aff w_map[1] = {lw_aff_dim(4)};
  MlirValue ins[3];
  MlirAttribute maps[3];
  int n = 0;
  ins[n] = x, maps[n++] = lw_aff_map(cx, 5, 3, re_map);
  if (comps == 2) ins[n] = x, maps[n++] = lw_aff_map(cx, 5, 3, im_map);
  ins[n] = w, maps[n++] = lw_aff_map(cx, 5, 1, w_map);
  int64_t sizes[4] = {lw_static_dim(x, 0), frames, bins, 2};
  MlirValue dyn[4] = {{NULL}, {NULL}, {NULL}, {NULL}};
  if (sizes[0] < 0) sizes[0] = mlirShapedTypeGetDynamicSize(), dyn[0] = lw_dim(cx, x, 0);
  dft_body b = {2, 4, 3, frame, -1.0, 1.0, 0, comps == 2, 1, dt, wdt};
  return run_transform(cx, &b, 5, n, ins, maps, 4, sizes, dyn, dt);
}
