/* infer_ml.c - type inference for the ai.onnx.ml ops: feature extraction
 * and encoding (ArrayFeatureExtractor, CastMap, CategoryMapper,
 * DictVectorizer, FeatureVectorizer, LabelEncoder, OneHotEncoder,
 * Normalizer, Scaler, ZipMap), classifiers and regressors. Binarizer and
 * Imputer keep their input's type and use the elementwise unary rule.
 *
 * Inputs of the classifiers and regressors are [N, C], or [C] read as
 * [1, C]. Where ONNX leaves a size to the runtime it stays unknown. */
#include <string.h>

#include "infer/infer.h"
#include "infer/infer_data.h"
#include "util/diag.h"

/* The count of a list attribute of any type; -1 when absent. */
static int attr_count(o2m_infer_ctx *ctx, const char *name) {
  const o2m_attr *a = o2m_attr_get(ctx, name);
  if (!a) return -1;
  if (a->type == O2M_ATTR_TENSOR) return a->t ? (int)a->t->count : 0;
  return a->count;
}

/* N of an [N, C] or [C] input (1 for [C]). */
static o2m_status batch_dim(o2m_infer_ctx *ctx, o2m_dim *n) {
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  *n = (o2m_dim){-1, NULL};
  if (!in) return O2M_OK;
  if (in->rank != 1 && in->rank != 2)
    return o2m_infer_error(ctx, "the input must be [N, C] or [C], not of rank %d", in->rank);
  *n = in->rank == 1 ? o2m_dim_known(1) : in->dims[0];
  return O2M_OK;
}

/* Normalizer, Scaler: float, the input's shape. */
o2m_status o2m_infer_ml_to_float(o2m_infer_ctx *ctx) {
  o2m_out_shaped_like(ctx, 0, O2M_DT_FLOAT, o2m_in_type(ctx, 0));
  return O2M_OK;
}

/* ArrayFeatureExtractor: X[..., indices] with the indices flattened into
 * the last dim; a 1-D X gives [1, n] (as onnxruntime and the reference). */
o2m_status o2m_infer_ml_array_feature_extractor(o2m_infer_ctx *ctx) {
  const o2m_type *x = o2m_in_ranked(ctx, 0), *indices = o2m_in_ranked(ctx, 1);
  o2m_dtype elem = o2m_in_type(ctx, 0)->elem;
  if (!x) {
    o2m_out_tensor(ctx, 0, elem, -1);
    return O2M_OK;
  }
  if (x->rank == 0) return o2m_infer_error(ctx, "X must have rank >= 1");
  int rank = x->rank == 1 ? 2 : x->rank;
  o2m_type *out = o2m_out_tensor(ctx, 0, elem, rank);
  if (out->rank != rank) return O2M_OK;
  if (x->rank == 1) out->dims[0] = o2m_dim_known(1);
  for (int k = 0; k < x->rank - 1; k++) out->dims[k] = x->dims[k];
  if (indices) out->dims[rank - 1] = o2m_dims_product(ctx, indices->dims, indices->rank);
  return O2M_OK;
}

/* CastMap: map<int64, string|float> to a tensor of cast_to's type. */
o2m_status o2m_infer_ml_cast_map(o2m_infer_ctx *ctx) {
  static const struct { const char *name; o2m_dtype dtype; } targets[] = {
      {"TO_FLOAT", O2M_DT_FLOAT}, {"TO_INT64", O2M_DT_INT64}, {"TO_STRING", O2M_DT_STRING}};
  const char *cast_to = o2m_attr_string(ctx, "cast_to", "TO_FLOAT");
  for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
    if (strcmp(cast_to, targets[i].name) == 0) {
      o2m_out_tensor(ctx, 0, targets[i].dtype, -1);
      return O2M_OK;
    }
  return o2m_infer_error(ctx, "cast_to must be TO_FLOAT, TO_INT64 or TO_STRING, not '%s'", cast_to);
}

/* CategoryMapper: strings to int64 and int64 to strings, same shape. */
o2m_status o2m_infer_ml_category_mapper(o2m_infer_ctx *ctx) {
  if (attr_count(ctx, "cats_int64s") != attr_count(ctx, "cats_strings"))
    return o2m_infer_error(ctx, "cats_int64s and cats_strings must have the same length");
  const o2m_type *in = o2m_in_type(ctx, 0);
  o2m_dtype elem = in->elem == O2M_DT_STRING ? O2M_DT_INT64
                   : in->elem == O2M_DT_INT64 ? O2M_DT_STRING
                                              : O2M_DT_UNDEFINED;
  if (in->elem && !elem)
    return o2m_infer_error(ctx, "the input must be strings or int64, not %s",
                           o2m_dtype_name(in->elem));
  o2m_out_shaped_like(ctx, 0, elem, in);
  return O2M_OK;
}

/* DictVectorizer: the map's values laid out by the vocabulary. */
o2m_status o2m_infer_ml_dict_vectorizer(o2m_infer_ctx *ctx) {
  const o2m_type *in = o2m_in_type(ctx, 0);
  if (in->kind != O2M_TYPE_MAP && in->kind != O2M_TYPE_UNKNOWN)
    return o2m_infer_error(ctx, "the input must be a map");
  o2m_dtype elem = in->kind == O2M_TYPE_MAP && in->inner ? in->inner->elem : O2M_DT_UNDEFINED;
  o2m_out_tensor(ctx, 0, elem, -1);
  return O2M_OK;
}

/* FeatureVectorizer: float [N, sum(inputdimensions)]. */
o2m_status o2m_infer_ml_feature_vectorizer(o2m_infer_ctx *ctx) {
  const int64_t *widths;
  int n = o2m_attr_ints(ctx, "inputdimensions", &widths);
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_FLOAT, 2);
  if (out->rank != 2) return O2M_OK;
  const o2m_type *first = o2m_in_ranked(ctx, 0);
  if (first && first->rank >= 1) out->dims[0] = first->dims[0];
  if (n < 0) return O2M_OK;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    if (widths[i] < 0 || widths[i] > INT64_MAX - total)
      return o2m_infer_error(ctx, "inputdimensions[%d] is out of range", i);
    total += widths[i];
  }
  out->dims[1] = o2m_dim_known(total);
  return O2M_OK;
}

/* LabelEncoder: the output's element type is that of the values_*
 * attribute (opset 2+; values_tensor since 4); opset 1 maps strings to
 * int64 and back. */
o2m_status o2m_infer_ml_label_encoder(o2m_infer_ctx *ctx) {
  static const struct { const char *attr; o2m_dtype dtype; } values[] = {
      {"values_strings", O2M_DT_STRING}, {"values_int64s", O2M_DT_INT64},
      {"values_floats", O2M_DT_FLOAT}, {"values_tensor", O2M_DT_UNDEFINED}};
  const o2m_type *in = o2m_in_type(ctx, 0);
  o2m_dtype elem = O2M_DT_UNDEFINED;
  if (ctx->op_version < 2) {
    elem = in->elem == O2M_DT_STRING ? O2M_DT_INT64
           : in->elem == O2M_DT_INT64 ? O2M_DT_STRING
                                      : O2M_DT_UNDEFINED;
  } else {
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
      const o2m_attr *a = o2m_attr_get(ctx, values[i].attr);
      if (!a) continue;
      if (elem) return o2m_infer_error(ctx, "only one values_* attribute may be set");
      elem = values[i].dtype ? values[i].dtype : a->t ? a->t->dtype : O2M_DT_UNDEFINED;
    }
    if (!elem) return o2m_infer_error(ctx, "one values_* attribute must be set");
  }
  o2m_out_shaped_like(ctx, 0, elem, in);
  return O2M_OK;
}

/* OneHotEncoder: float, the input's shape plus one dim per category. */
o2m_status o2m_infer_ml_one_hot_encoder(o2m_infer_ctx *ctx) {
  int ints = attr_count(ctx, "cats_int64s"), strings = attr_count(ctx, "cats_strings");
  if ((ints < 0) == (strings < 0))
    return o2m_infer_error(ctx, "exactly one of cats_int64s and cats_strings must be set");
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_FLOAT, in ? in->rank + 1 : -1);
  if (!in || out->rank != in->rank + 1) return O2M_OK;
  for (int k = 0; k < in->rank; k++) out->dims[k] = in->dims[k];
  out->dims[in->rank] = o2m_dim_known(ints < 0 ? strings : ints);
  return O2M_OK;
}

/* ZipMap: a sequence of map<string or int64, float>, one per row. */
o2m_status o2m_infer_ml_zipmap(o2m_infer_ctx *ctx) {
  int strings = attr_count(ctx, "classlabels_strings");
  int ints = attr_count(ctx, "classlabels_int64s");
  if ((strings > 0) == (ints > 0))
    return o2m_infer_error(ctx, "exactly one of classlabels_strings and "
                                "classlabels_int64s must be set");
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  if (in && in->rank != 1 && in->rank != 2)
    return o2m_infer_error(ctx, "the input must have rank 1 or 2, not %d", in->rank);
  o2m_type *value = o2m_type_tensor(ctx, O2M_DT_FLOAT, 0, NULL);
  o2m_type *map = o2m_arena_alloc(ctx->arena, sizeof(*map));
  if (!value || !map) return o2m_fail(ctx->diag, O2M_ERR_NOMEM, "out of memory");
  *map = (o2m_type){O2M_TYPE_MAP, strings > 0 ? O2M_DT_STRING : O2M_DT_INT64, -1, NULL, value};
  o2m_type seq = {O2M_TYPE_SEQUENCE, O2M_DT_UNDEFINED, -1, NULL, map};
  o2m_out_set_type(ctx, 0, &seq);
  return O2M_OK;
}

/* ---- classifiers and regressors ---------------------------------------- */

/* Classifiers: labels [N] (strings when classlabels_strings is set, else
 * int64) and float scores [N, E]. */
typedef enum { SCORES_UNKNOWN, SCORES_INTERCEPTS, SCORES_LABELS } score_rule;

typedef struct classifier {
  const char *name;
  const char *int_labels; /* the int64 class-labels attribute */
  score_rule scores;      /* how E is known */
} classifier;

static const classifier classifiers[] = {
    {"LinearClassifier", "classlabels_ints", SCORES_INTERCEPTS},
    {"SVMClassifier", "classlabels_ints", SCORES_UNKNOWN},
    {"TreeEnsembleClassifier", "classlabels_int64s", SCORES_LABELS},
};

/* E: one score per intercept, except that a binary model with one
 * intercept scores both classes; one per label, two for a single one. */
static int64_t score_count(o2m_infer_ctx *ctx, score_rule rule, int labels) {
  if (rule == SCORES_LABELS) return labels < 0 ? -1 : labels == 1 ? 2 : labels;
  int intercepts = attr_count(ctx, "intercepts");
  if (rule != SCORES_INTERCEPTS || intercepts < 0) return -1;
  return intercepts == 1 && labels == 2 ? 2 : intercepts;
}

o2m_status o2m_infer_ml_classifier(o2m_infer_ctx *ctx) {
  const classifier *c = NULL;
  for (size_t i = 0; i < sizeof(classifiers) / sizeof(classifiers[0]); i++)
    if (strcmp(classifiers[i].name, ctx->node->op_type) == 0) c = &classifiers[i];
  if (!c) return o2m_infer_unsupported(ctx, "no classifier rule for this op");
  o2m_dim n;
  o2m_status s = batch_dim(ctx, &n);
  if (s) return s;
  int strings = attr_count(ctx, "classlabels_strings");
  int labels = strings > 0 ? strings : attr_count(ctx, c->int_labels);
  o2m_type *y = o2m_out_tensor(ctx, 0, strings > 0 ? O2M_DT_STRING : O2M_DT_INT64, 1);
  if (y->rank == 1) y->dims[0] = n;
  o2m_type *z = o2m_out_tensor(ctx, 1, O2M_DT_FLOAT, 2);
  if (z->rank != 2) return O2M_OK;
  z->dims[0] = n;
  int64_t e = score_count(ctx, c->scores, labels);
  if (e >= 0) z->dims[1] = o2m_dim_known(e);
  return O2M_OK;
}

/* Regressors: [N, targets], float or (TreeEnsemble) the input's type. */
typedef struct regressor {
  const char *name;
  const char *targets_attr; /* NULL: one target */
  int64_t default_targets;  /* -1: unknown when the attribute is absent */
  int input_type;           /* the output has the input's element type */
} regressor;

static const regressor regressors[] = {
    {"LinearRegressor", "targets", 1, 0},
    {"SVMRegressor", NULL, 1, 0},
    {"TreeEnsembleRegressor", "n_targets", -1, 0},
    {"TreeEnsemble", "n_targets", -1, 1},
};

o2m_status o2m_infer_ml_regressor(o2m_infer_ctx *ctx) {
  const regressor *r = NULL;
  for (size_t i = 0; i < sizeof(regressors) / sizeof(regressors[0]); i++)
    if (strcmp(regressors[i].name, ctx->node->op_type) == 0) r = &regressors[i];
  if (!r) return o2m_infer_unsupported(ctx, "no regressor rule for this op");
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  if (r->input_type && in && in->rank != 2)
    return o2m_infer_error(ctx, "the input must have rank 2, not %d", in->rank);
  o2m_dim n;
  o2m_status s = batch_dim(ctx, &n);
  if (s) return s;
  int64_t targets = r->targets_attr ? o2m_attr_int(ctx, r->targets_attr, r->default_targets)
                                    : r->default_targets;
  if (r->targets_attr && o2m_attr_get(ctx, r->targets_attr) && targets < 0)
    return o2m_infer_error(ctx, "%s must not be negative", r->targets_attr);
  o2m_dtype elem = r->input_type ? o2m_in_type(ctx, 0)->elem : O2M_DT_FLOAT;
  o2m_type *out = o2m_out_tensor(ctx, 0, elem, 2);
  if (out->rank != 2) return O2M_OK;
  out->dims[0] = n;
  if (targets >= 0) out->dims[1] = o2m_dim_known(targets);
  return O2M_OK;
}
