/* decompose_resize.c - Resize (its core form Resize(X, roi?, scales?,
 * sizes?), normalize_resize.c) for targets that do not lower it, or a form
 * of it: modes nearest (every nearest_mode), linear and cubic
 * (cubic_coeff_a, exclude_outside), antialias, every
 * coordinate_transformation_mode (tf_crop_and_resize with roi and
 * extrapolation_value), axes and keep_aspect_ratio_policy.
 *
 * Resize is separable: along each resized axis (innermost first, as
 * ONNX's reference interpolates) the output is A x + e m, A a constant
 * [out, in] matrix of the taps' weights (edge clamped, exclude_outside,
 * antialias) computed at import in double precision as the reference
 * (onnx/reference/ops/op_resize.py) does, m the rows where
 * tf_crop_and_resize extrapolates and e extrapolation_value. Nearest
 * sampling (one tap of weight 1) is a Gather of the chosen rows (exact for
 * every dtype, and an inf or NaN stays in its row); the weighted modes are
 * a MatMul by A along the axis (moved last), in float32 (double for
 * double), on float inputs. Scales, sizes and roi must be known at import
 * (run/test specialize them); X's dims must be static.
 */
#include <math.h>
#include <string.h>

#include "transform/decompose_kit.h"
#include "transform/resize_sampling.h"
#include "util/diag.h"

typedef rs_geometry rs_axis;

/* The matrix m [out, in] of an axis (row-major) and its extrapolated rows
 * (extrap[o] = 1). -1 when the taps are too many. */
static int rs_matrix(const rs_attrs *at, const rs_axis *ax, double *m, double *extrap) {
  double c[RS_MAX_TAPS];
  int64_t n = rs_coeffs(at, 1.0, ax->scale, c), at_i[RS_MAX_TAPS];
  if (n < 0) return -1;
  memset(m, 0, (size_t)(ax->out * ax->in) * sizeof(double));
  for (int64_t o = 0; o < ax->out; o++) {
    int ex;
    double x = rs_source(at, ax, (double)o, &ex), xi = floor(x);
    double ratio = x == xi ? 1.0 : x - xi;
    if (rs_coeffs(at, ratio, ax->scale, c) != n) return -1;
    extrap[o] = ex;
    if (ex) continue;
    double sum = rs_taps(at, x, n, ax->in, at_i, c);
    if (at->mode == RS_NEAREST && !at->exclude) { /* one tap: the chosen side */
      m[o * ax->in + at_i[c[0] != 0 ? 0 : 1]] = 1.0;
      continue;
    }
    for (int64_t j = 0; j < n; j++)
      m[o * ax->in + at_i[j]] += at->exclude && sum != 0 ? c[j] / sum : c[j];
  }
  return 0;
}

static int rs_isclose(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* A string attribute's index in names, dflt when absent, -1 when unknown. */
static int pick(o2m_rewriter *rw, const char *name, const char *const *names, int n, int dflt) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  if (!a || a->type != O2M_ATTR_STRING) return dflt;
  for (int i = 0; i < n; i++)
    if (a->s.len == strlen(names[i]) && memcmp(a->s.ptr, names[i], a->s.len) == 0) return i;
  return -1;
}

static const o2m_tensor *known(o2m_rewriter *rw, int i) {
  o2m_value *v = o2m_rw_in(rw, i);
  return !v ? NULL : v->init ? v->init : v->known;
}

enum { RS_MAX_RANK = 16 };

/* Reads scales or sizes, roi and axes into ax[] (every axis of X). */
static o2m_status resize_axes(o2m_rewriter *rw, int r, const int64_t *dims, const rs_attrs *at,
                              rs_axis *ax) {
  int axes[RS_MAX_RANK], n_axes = r, seen[RS_MAX_RANK] = {0};
  const o2m_attr *aa = o2m_rw_attr(rw, "axes");
  int na = aa && aa->type == O2M_ATTR_INTS ? aa->count : -1;
  if (na > r) return o2m_rw_error(rw, "%d axes for rank %d", na, r);
  if (na >= 0) n_axes = na;
  for (int i = 0; i < n_axes; i++) {
    axes[i] = na >= 0 ? xk_axis(aa->ints[i], r) : i;
    if (axes[i] < 0 || seen[axes[i]]++) return o2m_rw_error(rw, "bad axes");
  }
  for (int k = 0; k < r; k++) {
    memset(&ax[k], 0, sizeof(ax[k]));
    ax[k].in = ax[k].out = dims[k], ax[k].scale = 1.0, ax[k].roi[1] = 1.0;
  }
  static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
  int policy = pick(rw, "keep_aspect_ratio_policy", policies, 3, 0);
  if (policy < 0) return o2m_rw_error(rw, "unknown keep_aspect_ratio_policy");
  int has_scales = o2m_rw_in(rw, 2) != NULL, has_sizes = o2m_rw_in(rw, 3) != NULL;
  if (has_scales == has_sizes) return o2m_rw_error(rw, "exactly one of scales and sizes must be given");
  if (at->coord == RS_TF_CROP_AND_RESIZE) {
    const o2m_tensor *t = known(rw, 1);
    if (!t) return o2m_rw_unsupported(rw, "roi is not known at import");
    if (t->count != 2 * n_axes || !o2m_dtype_is_float(t->dtype))
      return o2m_rw_error(rw, "roi has %lld entries", (long long)t->count);
    for (int i = 0; i < n_axes; i++) {
      ax[axes[i]].roi[0] = o2m_tensor_get_float(t, i);
      ax[axes[i]].roi[1] = o2m_tensor_get_float(t, n_axes + i);
      ax[axes[i]].roi_f32 = t->dtype == O2M_DT_FLOAT;
    }
  }
  const o2m_tensor *t = known(rw, has_scales ? 2 : 3);
  if (!t) return o2m_rw_unsupported(rw, "%s are not known at import", has_scales ? "scales" : "sizes");
  if (t->count != n_axes) return o2m_rw_error(rw, "%lld scales or sizes for %d axes", (long long)t->count, n_axes);
  for (int i = 0; i < n_axes; i++) {
    rs_axis *a = &ax[axes[i]];
    if (has_scales) {
      a->scale = o2m_tensor_get_float(t, i);
      if (!(a->scale > 0)) return o2m_rw_error(rw, "scale %g is not positive", a->scale);
      a->out = (int64_t)(a->scale * (double)a->in);
    } else {
      a->out = (int64_t)o2m_tensor_get_float(t, i), a->scale = (double)a->out / (double)a->in;
    }
  }
  if (!has_scales && policy != 0) { /* one scale for every axis: the smallest or largest */
    double s = ax[axes[0]].scale;
    for (int i = 1; i < n_axes; i++) s = policy == 1 ? fmin(s, ax[axes[i]].scale) : fmax(s, ax[axes[i]].scale);
    for (int i = 0; i < n_axes; i++)
      ax[axes[i]].scale = s, ax[axes[i]].out = (int64_t)(s * (double)ax[axes[i]].in + 0.5);
  }
  for (int i = 0; i < n_axes; i++) {
    rs_axis *a = &ax[axes[i]];
    a->resized = !(rs_isclose(a->scale, 1.0) && a->out == a->in &&
                   (at->coord != RS_TF_CROP_AND_RESIZE || (fabs(a->roi[0]) <= 1e-9 && rs_isclose(a->roi[1], 1.0))));
    if (a->resized && (a->in <= 0 || a->out <= 0)) return o2m_rw_unsupported(rw, "an empty axis %d", axes[i]);
  }
  return O2M_OK;
}

/* y with the rows o of axis k where extrap[o] is set replaced by e. */
static o2m_value *extrapolate(o2m_rewriter *rw, o2m_value *y, int k, int rank, const rs_axis *ax,
                              const double *extrap, double e) {
  int any = 0;
  for (int64_t o = 0; o < ax->out; o++) any |= extrap[o] != 0;
  if (!any) return y;
  o2m_value *mask = xk_along_axis(rw, xk_const_1d(rw, O2M_DT_BOOL, extrap, (int)ax->out), k, rank);
  return xk_where(rw, mask, xk_scalar_like(rw, y, e), y);
}

/* Nearest sampling along axis k: a Gather of the chosen rows. */
static o2m_value *gather_rows(o2m_rewriter *rw, o2m_value *y, int k, const rs_axis *ax, const double *m) {
  int64_t *idx = o2m_arena_array(&rw->model->arena, (size_t)ax->out + 1, sizeof(int64_t));
  if (!idx) return NULL;
  for (int64_t o = 0; o < ax->out; o++) {
    idx[o] = 0;
    for (int64_t i = 0; i < ax->in; i++)
      if (m[o * ax->in + i] != 0) idx[o] = i;
  }
  o2m_value *in[2] = {y, o2m_rw_const_ints(rw, idx, (int)ax->out)};
  o2m_attr axis = o2m_rw_attr_int("axis", k);
  return in[1] ? o2m_rw_op(rw, "Gather", 2, in, &axis, 1) : NULL;
}

/* Weighted sampling along axis k: y (axis k moved last) times A^T. */
static o2m_value *weigh_rows(o2m_rewriter *rw, o2m_value *y, int k, int rank, const rs_axis *ax,
                             const double *m) {
  int64_t perm[RS_MAX_RANK], dims[2] = {ax->in, ax->out};
  for (int j = 0; j < rank; j++) perm[j] = j;
  perm[k] = rank - 1, perm[rank - 1] = k; /* a swap: its own inverse */
  double *mt = o2m_arena_array(&rw->model->arena, (size_t)(ax->in * ax->out) + 1, sizeof(double));
  if (!mt) return NULL;
  for (int64_t o = 0; o < ax->out; o++)
    for (int64_t i = 0; i < ax->in; i++) mt[i * ax->out + o] = m[o * ax->in + i];
  o2m_value *t = k == rank - 1 ? y : xk_transpose(rw, y, perm, rank);
  t = xk_op2(rw, "MatMul", t, xk_const_nd(rw, xk_elem(y), 2, dims, mt));
  return k == rank - 1 ? t : xk_transpose(rw, t, perm, rank);
}

o2m_status o2m_decompose_resize(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  int rank = xk_rank(x);
  int64_t dims[RS_MAX_RANK];
  if (rank < 1 || rank > RS_MAX_RANK || !XK_STATIC_DIMS(x, dims))
    return o2m_rw_unsupported(rw, "an input without static dims");
  rs_attrs at = {0};
  int mode = pick(rw, "mode", rs_modes, RS_MODE_COUNT, RS_NEAREST);
  int coord = pick(rw, "coordinate_transformation_mode", rs_coords, RS_COORD_COUNT, RS_HALF_PIXEL);
  int nm = pick(rw, "nearest_mode", rs_rounds, RS_ROUND_COUNT, RS_PREFER_FLOOR);
  if (mode < 0 || coord < 0 || nm < 0)
    return o2m_rw_error(rw, "unknown mode, coordinate_transformation_mode or nearest_mode");
  at.mode = (rs_mode)mode, at.coord = (rs_coord)coord, at.nearest = (rs_round)nm;
  at.antialias = at.mode != RS_NEAREST && o2m_rw_attr_i(rw, "antialias", 0) != 0;
  at.exclude = o2m_rw_attr_i(rw, "exclude_outside", 0) != 0;
  at.a = o2m_rw_attr_f(rw, "cubic_coeff_a", -0.75f);
  double e = o2m_rw_attr_f(rw, "extrapolation_value", 0.0f);
  rs_axis ax[RS_MAX_RANK];
  o2m_status s = resize_axes(rw, rank, dims, &at, ax);
  if (s) return s;
  o2m_dtype dt = xk_elem(x);
  int weighted = at.mode != RS_NEAREST || at.exclude;
  if (weighted && !o2m_dtype_is_float(dt)) return o2m_rw_unsupported(rw, "weighted resize of integers");
  o2m_value *y = weighted ? xk_cast(rw, x, dt == O2M_DT_DOUBLE ? dt : O2M_DT_FLOAT) : x;
  for (int k = rank - 1; k >= 0 && y; k--) {
    if (!ax[k].resized) continue;
    if (ax[k].out * ax[k].in > (1 << 22)) return o2m_rw_unsupported(rw, "a resize matrix over 4M entries");
    double *m = o2m_arena_array(&rw->model->arena, (size_t)(ax[k].out * ax[k].in) + 1, sizeof(double));
    double *ex = o2m_arena_array(&rw->model->arena, (size_t)ax[k].out + 1, sizeof(double));
    if (!m || !ex) return o2m_fail(rw->diag, O2M_ERR_NOMEM, "out of memory");
    if (rs_matrix(&at, &ax[k], m, ex))
      return o2m_rw_unsupported(rw, "antialiased scale %g of axis %d needs over %d taps", ax[k].scale, k, RS_MAX_TAPS);
    y = weighted ? weigh_rows(rw, y, k, rank, &ax[k], m) : gather_rows(rw, y, k, &ax[k], m);
    y = extrapolate(rw, y, k, rank, &ax[k], ex, e);
  }
  return xk_bind(rw, 0, xk_cast(rw, y, dt));
}
