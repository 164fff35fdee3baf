/* normalize_resize.c - Upsample (every version) and Resize before its core
 * form, rewritten to Resize(X, roi?, scales?, sizes?) at O2M_CORE_OPSET:
 *  - Upsample-1 (height_scale/width_scale, "bilinear"), Upsample-7 (scales
 *    attribute), Upsample-9/10 (scales input) and Resize-10 had no
 *    coordinate_transformation_mode: they sample asymmetrically, and in
 *    nearest mode take floor(x) when upsampling and ceil(x) when
 *    downsampling (what onnxruntime, their de-facto reference, does);
 *  - Resize-11/12 pass roi and scales as required inputs that may be empty
 *    tensors: empty ones, and a roi that only tf_crop_and_resize reads,
 *    become missing inputs (the core form's "not given"), at every
 *    version. tf_half_pixel_for_nn (11, 12 only) has no core spelling and
 *    is refused.
 */
#include <string.h>

#include "transform/decompose_kit.h"

/* Non-zero when v is given and not known (or typed) to be empty. */
static int given(const o2m_value *v) {
  if (!v) return 0;
  if (v->known) return v->known->count > 0;
  return !(xk_rank(v) == 1 && v->type.dims[0].size == 0);
}

/* The nearest_mode of the old versions for known scales: "floor" when no
 * axis shrinks, "ceil" when no axis grows; NULL when mixed or unknown. */
static const char *old_nearest_mode(const o2m_value *scales) {
  const o2m_tensor *t = scales ? scales->known : NULL;
  if (!t || !o2m_dtype_is_float(t->dtype)) return NULL;
  int grows = 0, shrinks = 0;
  for (int64_t i = 0; i < t->count; i++) {
    double s = o2m_tensor_get_float(t, i);
    grows |= s > 1.0;
    shrinks |= s < 1.0;
  }
  return shrinks ? (grows ? NULL : "ceil") : "floor";
}

/* Resize(x, -, scales) into the node's output with the old versions'
 * sampling, in `mode` ("nearest" or "linear"). Upsample's scales are >= 1
 * by definition, so `upsample` implies floor when they are unknown. */
static o2m_status old_resize(o2m_rewriter *rw, o2m_value *x, o2m_value *scales,
                             const char *mode, int upsample) {
  const char *nearest = old_nearest_mode(scales);
  if (!nearest && upsample && !(scales && scales->known)) nearest = "floor";
  int is_nearest = strcmp(mode, "nearest") == 0;
  if (!is_nearest && strcmp(mode, "linear") != 0)
    return o2m_rw_unsupported(rw, "mode '%s' is not nearest or linear", mode);
  if (is_nearest && !nearest)
    return o2m_rw_unsupported(rw, "nearest sampling needs known scales that all grow or all shrink");
  if (!scales) return xk_failed(rw);
  o2m_attr attrs[3] = {o2m_rw_attr_string(rw, "mode", mode),
                       o2m_rw_attr_string(rw, "coordinate_transformation_mode", "asymmetric"),
                       o2m_rw_attr_string(rw, "nearest_mode", is_nearest ? nearest : "floor")};
  o2m_value *in[3] = {x, NULL, scales}, *y = o2m_rw_out(rw, 0);
  return o2m_rw_node_into(rw, "Resize", 3, in, 1, &y, attrs, 3);
}

/* The node's mode attribute, "bilinear" (Upsample-1) read as "linear". */
static const char *mode_of(o2m_rewriter *rw) {
  const o2m_attr *a = o2m_rw_attr(rw, "mode");
  if (!a || a->type != O2M_ATTR_STRING) return "nearest";
  const char *mode = o2m_arena_strndup(&rw->model->arena, (const char *)a->s.ptr, a->s.len);
  return mode && strcmp(mode, "bilinear") == 0 ? "linear" : mode ? mode : "nearest";
}

o2m_status o2m_normalize_upsample(o2m_rewriter *rw) {
  int version = xk_version(rw);
  o2m_value *x = o2m_rw_in(rw, 0), *scales = o2m_rw_in(rw, 1);
  if (version < 7) {
    double hw[4] = {1.0, 1.0, o2m_rw_attr_f(rw, "height_scale", 1.0f),
                    o2m_rw_attr_f(rw, "width_scale", 1.0f)};
    scales = xk_const_1d(rw, O2M_DT_FLOAT, hw, 4);
  } else if (version < 9) {
    const o2m_attr *a = o2m_rw_attr(rw, "scales");
    if (!a || a->type != O2M_ATTR_FLOATS) return o2m_rw_error(rw, "the scales attribute is missing");
    double values[a->count + 1];
    for (int k = 0; k < a->count; k++) values[k] = a->floats[k];
    scales = xk_const_1d(rw, O2M_DT_FLOAT, values, a->count);
  }
  return old_resize(rw, x, scales, mode_of(rw), 1);
}

o2m_status o2m_normalize_resize(o2m_rewriter *rw) {
  int version = xk_version(rw);
  o2m_value *x = o2m_rw_in(rw, 0);
  if (version < 11) return old_resize(rw, x, o2m_rw_in(rw, 1), mode_of(rw), 0);
  const o2m_attr *ct = o2m_rw_attr(rw, "coordinate_transformation_mode");
  const char *coord = "half_pixel";
  if (ct && ct->type == O2M_ATTR_STRING)
    coord = o2m_arena_strndup(&rw->model->arena, (const char *)ct->s.ptr, ct->s.len);
  if (!coord) return o2m_rw_error(rw, "out of memory");
  if (strcmp(coord, "tf_half_pixel_for_nn") == 0)
    return o2m_rw_unsupported(rw, "coordinate_transformation_mode tf_half_pixel_for_nn");
  o2m_value *in[4] = {x, o2m_rw_in(rw, 1), o2m_rw_in(rw, 2), o2m_rw_in(rw, 3)};
  int changed = version < 13;
  if (in[1] && (!given(in[1]) || strcmp(coord, "tf_crop_and_resize") != 0)) in[1] = NULL, changed = 1;
  for (int i = 2; i < 4; i++)
    if (in[i] && !given(in[i])) in[i] = NULL, changed = 1;
  if (!changed) return O2M_OK;
  int n_in = 4, n_attrs;
  while (n_in > 1 && !in[n_in - 1]) n_in--;
  o2m_attr *attrs = xk_attrs_except(rw, NULL, 0, &n_attrs);
  return attrs ? o2m_rw_update(rw, n_in, in, attrs, n_attrs) : xk_failed(rw);
}
