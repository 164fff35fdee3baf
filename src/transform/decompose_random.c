/* decompose_random.c - seeded random ops of static shape drawn at import:
 * RandomUniform, RandomUniformLike, and the mask of a training-mode
 * Dropout. The ONNX reference implementation re-seeds numpy's legacy
 * RandomState at every evaluation, so a seeded op gives the same values
 * each time; drawing them once with the same generator (numpy_random.c)
 * gives those values as a constant, for every target. Unseeded ops, and
 * draws of more than MAX_DRAWS values, are refused (onnxruntime differs
 * here: its seeded generators advance from one run to the next).
 */
#include <math.h>

#include "transform/decompose_kit.h"
#include "transform/numpy_random.h"

enum { MAX_DRAWS = 1 << 22 };

/* The generator seeded by attribute `seed` (an int or a float, truncated
 * as the reference does), or an unsupported status. */
static o2m_status seeded(o2m_rewriter *rw, o2m_mt19937 *mt) {
  const o2m_attr *a = o2m_rw_attr(rw, "seed");
  if (!a) return o2m_rw_unsupported(rw, "random values without a seed are drawn at run time, which no target does");
  double seed = a->type == O2M_ATTR_FLOAT ? (double)a->f : (double)a->i;
  if (!(seed > -1.0 && seed < 4294967296.0))
    return o2m_rw_error(rw, "seed %g is outside 0 to 2^32 - 1", seed);
  o2m_mt_seed(mt, (uint32_t)seed);
  return O2M_OK;
}

/* A draw over v's static shape: the seeded generator, v's rank, dims and
 * element count; an unsupported status when there is no seed or shape. */
typedef struct draw {
  o2m_mt19937 mt;
  int rank;
  int64_t dims[16], count;
} draw;

static o2m_status start_draw(o2m_rewriter *rw, const o2m_value *v, draw *d) {
  o2m_status s = seeded(rw, &d->mt);
  if (s) return s;
  if (!v || !XK_STATIC_DIMS(v, d->dims)) return o2m_rw_unsupported(rw, "the shape is not known at import");
  d->rank = xk_rank(v);
  d->count = 1;
  for (int k = 0; k < d->rank; k++)
    if ((d->count *= d->dims[k]) > MAX_DRAWS)
      return o2m_rw_unsupported(rw, "more than %d values to draw at import", MAX_DRAWS);
  return O2M_OK;
}

/* RandomUniform(Like): numpy's rand() of the shape, in the output's type,
 * then scaled by high - low and moved by low in that type. */
o2m_status o2m_decompose_random_uniform(o2m_rewriter *rw) {
  o2m_value *out = o2m_rw_out(rw, 0);
  o2m_dtype dtype = xk_elem(out);
  if (dtype != O2M_DT_FLOAT && dtype != O2M_DT_DOUBLE && dtype != O2M_DT_FLOAT16)
    return o2m_rw_unsupported(rw, "a draw of %s values", o2m_dtype_name(dtype));
  draw d;
  o2m_status s = start_draw(rw, out, &d);
  if (s) return s;
  o2m_tensor *t = o2m_rw_new_tensor(rw, dtype, d.rank, d.dims);
  if (!t) return xk_failed(rw);
  double high = o2m_rw_attr_f(rw, "high", 1.0f), low = o2m_rw_attr_f(rw, "low", 0.0f);
  for (int64_t i = 0; i < d.count; i++) {
    double u = o2m_mt_next_double(&d.mt);
    if (dtype == O2M_DT_DOUBLE) o2m_tensor_set_float(t, i, u * (high - low) + low);
    else o2m_tensor_set_float(t, i, (float)((float)u * (float)(high - low)) + (float)low);
  }
  return xk_bind(rw, 0, o2m_rw_const_tensor(rw, t));
}

/* Dropout in training mode with a seed: numpy's uniform draws over X's
 * shape keep an element where the draw is at least the ratio; Y is X
 * times 1 / (1 - ratio) where kept, 0 elsewhere; the mask is the draw. */
o2m_status o2m_decompose_seeded_dropout(o2m_rewriter *rw, double ratio) {
  o2m_value *x = o2m_rw_in(rw, 0), *mask_out = o2m_rw_out(rw, 1);
  o2m_dtype dtype = xk_elem(x);
  if (!o2m_dtype_is_float(dtype)) return o2m_rw_unsupported(rw, "dropout of %s values", o2m_dtype_name(dtype));
  if (!(ratio > 0.0 && ratio < 1.0)) return o2m_rw_error(rw, "ratio %g is not in [0, 1)", ratio);
  draw d;
  o2m_status s = start_draw(rw, x, &d);
  if (s) return s;
  o2m_tensor *scale = o2m_rw_new_tensor(rw, dtype, d.rank, d.dims);
  o2m_tensor *mask = mask_out ? o2m_rw_new_tensor(rw, O2M_DT_BOOL, d.rank, d.dims) : NULL;
  if (!scale || (mask_out && !mask)) return xk_failed(rw);
  double keep_scale = 1.0 / (1.0 - ratio);
  for (int64_t i = 0; i < d.count; i++) {
    int keep = o2m_mt_next_double(&d.mt) >= ratio;
    o2m_tensor_set_float(scale, i, keep ? keep_scale : 0.0);
    if (mask) o2m_tensor_set_int(mask, i, keep);
  }
  s = xk_bind(rw, 0, xk_op2(rw, "Mul", x, o2m_rw_const_tensor(rw, scale)));
  return s || !mask ? s : xk_bind(rw, 1, o2m_rw_const_tensor(rw, mask));
}
