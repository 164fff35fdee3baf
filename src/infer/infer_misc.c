/* infer_misc.c - type inference for the text ops (StringNormalizer,
 * StringSplit; StringConcat and RegexFullMatch use the elementwise rules),
 * TfIdfVectorizer, ImageDecoder and the ai.onnx.preview.training ops
 * (Adagrad, Adam, Momentum, Gradient). */
#include <string.h>

#include "infer/infer.h"

/* ---- text -------------------------------------------------------------- */

/* StringNormalizer: [C] or [1, C] strings; dropping stop words leaves an
 * unknown count in the last dim. */
o2m_status o2m_infer_string_normalizer(o2m_infer_ctx *ctx) {
  const char *action = o2m_attr_string(ctx, "case_change_action", "NONE");
  if (strcmp(action, "NONE") && strcmp(action, "LOWER") && strcmp(action, "UPPER"))
    return o2m_infer_error(ctx, "case_change_action must be NONE, LOWER or UPPER, not '%s'",
                           action);
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  if (!in) {
    o2m_out_tensor(ctx, 0, O2M_DT_STRING, -1);
    return O2M_OK;
  }
  if (in->rank != 1 && in->rank != 2)
    return o2m_infer_error(ctx, "the input must be [C] or [1, C], not of rank %d", in->rank);
  if (in->rank == 2 && in->dims[0].size >= 0 && in->dims[0].size != 1)
    return o2m_infer_error(ctx, "the input must be [C] or [1, C], not [%lld, C]",
                           (long long)in->dims[0].size);
  o2m_type *out = o2m_out_shaped_like(ctx, 0, O2M_DT_STRING, in);
  if (o2m_attr_get(ctx, "stopwords") && out->rank == in->rank)
    out->dims[in->rank - 1] = (o2m_dim){-1, NULL};
  return O2M_OK;
}

/* StringSplit: the substrings gain a last dim (the most substrings of any
 * element); the counts have the input's shape. */
o2m_status o2m_infer_string_split(o2m_infer_ctx *ctx) {
  if (o2m_attr_int(ctx, "maxsplit", 0) < 0)
    return o2m_infer_error(ctx, "maxsplit must not be negative");
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  o2m_out_shaped_like(ctx, 1, O2M_DT_INT64, o2m_in_type(ctx, 0));
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_STRING, in ? in->rank + 1 : -1);
  for (int k = 0; in && out->rank == in->rank + 1 && k < in->rank; k++)
    out->dims[k] = in->dims[k];
  return O2M_OK;
}

/* TfIdfVectorizer: float [max(ngram_indexes) + 1] per row of a [C] or
 * [N, C] input. */
o2m_status o2m_infer_tfidf(o2m_infer_ctx *ctx) {
  const int64_t *indexes;
  int n = o2m_attr_ints(ctx, "ngram_indexes", &indexes);
  if (n <= 0) return o2m_infer_error(ctx, "ngram_indexes must be given and not empty");
  int64_t width = 0;
  for (int i = 0; i < n; i++) {
    if (indexes[i] < 0)
      return o2m_infer_error(ctx, "ngram_indexes[%d] is negative", i);
    if (indexes[i] >= width) width = indexes[i] + 1;
  }
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  if (in && in->rank != 1 && in->rank != 2)
    return o2m_infer_error(ctx, "the input must have rank 1 or 2, not %d", in->rank);
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_FLOAT, in ? in->rank : -1);
  if (!in || out->rank != in->rank) return O2M_OK;
  if (in->rank == 2) out->dims[0] = in->dims[0];
  out->dims[in->rank - 1] = o2m_dim_known(width);
  return O2M_OK;
}

/* ImageDecoder: uint8 [height, width, channels] from a 1-D byte stream;
 * 3 channels for RGB and BGR, 1 for Grayscale. */
o2m_status o2m_infer_image_decoder(o2m_infer_ctx *ctx) {
  const char *format = o2m_attr_string(ctx, "pixel_format", "RGB");
  int64_t channels = strcmp(format, "Grayscale") == 0 ? 1 : 3;
  if (channels == 3 && strcmp(format, "RGB") && strcmp(format, "BGR"))
    return o2m_infer_error(ctx, "pixel_format must be RGB, BGR or Grayscale, not '%s'", format);
  const o2m_type *in = o2m_in_ranked(ctx, 0);
  if (in && in->rank != 1)
    return o2m_infer_error(ctx, "the encoded stream must have rank 1, not %d", in->rank);
  o2m_type *out = o2m_out_tensor(ctx, 0, O2M_DT_UINT8, 3);
  if (out->rank == 3) out->dims[2] = o2m_dim_known(channels);
  return O2M_OK;
}

/* ---- ai.onnx.preview.training ------------------------------------------ */

/* The optimizers take R, T, then `groups` lists of n tensors (X, G, and
 * their state: H; V; V and H) and return X_new and the new state: every
 * list but the gradients, in order, each output typed as its input. */
typedef struct optimizer {
  const char *name;
  int groups;
} optimizer;

static const optimizer optimizers[] = {{"Adagrad", 3}, {"Momentum", 3}, {"Adam", 4}};

static o2m_status infer_optimizer(o2m_infer_ctx *ctx, int groups) {
  int n_in = o2m_in_count(ctx) - 2;
  if (n_in <= 0 || n_in % groups)
    return o2m_infer_error(ctx, "expects R, T and %d lists of equal length, got %d inputs",
                           groups, n_in + 2);
  int n = n_in / groups;
  if (o2m_out_count(ctx) > (groups - 1) * n)
    return o2m_infer_error(ctx, "%d outputs for %d optimized tensors", o2m_out_count(ctx), n);
  for (int o = 0; o < o2m_out_count(ctx); o++) {
    int list = o / n, in_list = list == 0 ? 0 : list + 1; /* skip G */
    o2m_out_set_type(ctx, o, o2m_in_type(ctx, 2 + in_list * n + o % n));
  }
  return O2M_OK;
}

/* Gradient: the i-th output is the gradient with respect to xs[i], whose
 * value is the i-th input: it has that input's type. */
static o2m_status infer_gradient(o2m_infer_ctx *ctx) {
  const o2m_attr *xs = o2m_attr_get(ctx, "xs");
  if (!xs || xs->type != O2M_ATTR_STRINGS)
    return o2m_infer_error(ctx, "the 'xs' attribute is missing");
  if (o2m_out_count(ctx) > xs->count || o2m_in_count(ctx) < xs->count)
    return o2m_infer_error(ctx, "%d xs need as many inputs and at most as many "
                                "outputs, got %d and %d",
                           xs->count, o2m_in_count(ctx), o2m_out_count(ctx));
  for (int o = 0; o < o2m_out_count(ctx); o++) o2m_out_set_type(ctx, o, o2m_in_type(ctx, o));
  return O2M_OK;
}

o2m_status o2m_infer_training(o2m_infer_ctx *ctx) {
  for (size_t i = 0; i < sizeof(optimizers) / sizeof(optimizers[0]); i++)
    if (strcmp(optimizers[i].name, ctx->node->op_type) == 0)
      return infer_optimizer(ctx, optimizers[i].groups);
  if (strcmp(ctx->node->op_type, "Gradient") == 0) return infer_gradient(ctx);
  return o2m_infer_unsupported(ctx, "no training rule for this op");
}
