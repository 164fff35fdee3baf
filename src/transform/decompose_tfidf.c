/* decompose_tfidf.c - TfIdfVectorizer on integer input (pool_int64s)
 * written in core ops, for every target.
 *
 * The pool holds ngram_counts' groups: the n-grams of length 1, then 2, ...
 * (group n from ngram_counts[n - 1] to ngram_counts[n], n values each);
 * n-gram g's count goes to output coordinate ngram_indexes[g]. For each
 * length n in [min_gram_length, max_gram_length] and each skip s (0 to
 * max_skip_count for n >= 2; a unigram is counted once), the n-grams of a
 * row are the tuples (x[i], x[i + d], ..., x[i + (n - 1) d]), d = s + 1, of
 * every start i that fits: their columns are n Slices of the row, each
 * compared to the pool's k-th values ([B, P, 1] == [G_n]), the n
 * comparisons And-ed and summed over the starts: the counts [B, G_n]. Then
 * TF keeps the counts, IDF takes weights[g] (or 1) where the count is not
 * 0, TFIDF multiplies by them; a MatMul by the one-hot [G, out] matrix of
 * ngram_indexes places them. All sizes are static: the row's length must
 * be known. String pools are left to the targets (none takes strings).
 */
#include <stdlib.h>
#include <string.h>

#include "transform/decompose_kit.h"

typedef struct tfidf {
  int64_t min_n, max_n, max_skip;
  const int64_t *counts, *indexes, *pool;
  int64_t n_counts, n_indexes, n_pool;
  const float *weights; /* NULL when absent */
  int64_t n_weights;
} tfidf;

static const int64_t *ints_attr(o2m_rewriter *rw, const char *name, int64_t *n) {
  const o2m_attr *a = o2m_rw_attr(rw, name);
  *n = a && a->type == O2M_ATTR_INTS ? a->count : 0;
  return *n ? a->ints : NULL;
}

/* The first pool position and the count of group n (n-grams of length n). */
static void group_of(const tfidf *t, int64_t n, int64_t *first, int64_t *grams) {
  int64_t start = t->counts[n - 1], end = n < t->n_counts ? t->counts[n] : t->n_pool;
  *first = start;
  *grams = end > start ? (end - start) / n : 0;
}

/* The counts [B, G_n] of group n's n-grams in rows [B, C]. */
static o2m_value *counts_of(o2m_rewriter *rw, const tfidf *t, o2m_value *rows, int64_t c, int64_t n, o2m_dtype dt) {
  int64_t first, grams;
  group_of(t, n, &first, &grams);
  double *column = malloc(((size_t)grams + 1) * sizeof(double));
  if (!column) return NULL;
  o2m_value *total = NULL;
  for (int64_t s = 0; s <= (n > 1 ? t->max_skip : 0); s++) {
    int64_t d = s + 1, starts = c - (n - 1) * d;
    if (starts <= 0) break;
    o2m_value *hit = NULL;
    for (int64_t k = 0; k < n; k++) {
      for (int64_t g = 0; g < grams; g++) column[g] = (double)t->pool[first + g * n + k];
      const int64_t axis2[1] = {2};
      o2m_value *values = xk_unsqueeze(rw, xk_slice(rw, rows, 1, k * d, k * d + starts), axis2, 1);
      o2m_value *eq = xk_op2(rw, "Equal", values, xk_const_1d(rw, dt, column, (int)grams));
      hit = hit ? xk_op2(rw, "And", hit, eq) : eq;
    }
    const int64_t axis1[1] = {1};
    o2m_value *found = xk_reduce(rw, "ReduceSum", xk_cast(rw, hit, O2M_DT_FLOAT), axis1, 1, 0);
    total = total ? xk_op2(rw, "Add", total, found) : found;
  }
  free(column);
  return total;
}

o2m_status o2m_decompose_tfidf_vectorizer(o2m_rewriter *rw) {
  o2m_value *x = o2m_rw_in(rw, 0);
  tfidf t = {o2m_rw_attr_i(rw, "min_gram_length", 1), o2m_rw_attr_i(rw, "max_gram_length", 1),
             o2m_rw_attr_i(rw, "max_skip_count", 0)};
  t.counts = ints_attr(rw, "ngram_counts", &t.n_counts);
  t.indexes = ints_attr(rw, "ngram_indexes", &t.n_indexes);
  t.pool = ints_attr(rw, "pool_int64s", &t.n_pool);
  const o2m_attr *w = o2m_rw_attr(rw, "weights");
  t.n_weights = w && w->type == O2M_ATTR_FLOATS ? w->count : 0;
  t.weights = t.n_weights ? w->floats : NULL;
  const o2m_attr *mode_attr = o2m_rw_attr(rw, "mode");
  char mode[8] = "";
  if (mode_attr && mode_attr->type == O2M_ATTR_STRING && mode_attr->s.len < sizeof(mode))
    memcpy(mode, mode_attr->s.ptr, mode_attr->s.len);
  int rank = xk_rank(x);
  int64_t dims[2];
  o2m_dtype dt = xk_elem(x);
  if (!t.pool || (dt != O2M_DT_INT32 && dt != O2M_DT_INT64))
    return o2m_rw_unsupported(rw, "TfIdfVectorizer on strings (pool_strings): no target takes strings");
  if ((rank != 1 && rank != 2) || !XK_STATIC_DIMS(x, dims))
    return o2m_rw_unsupported(rw, "TfIdfVectorizer needs a 1-D or 2-D input of known dims");
  if (t.min_n < 1 || t.max_n < t.min_n || t.max_n > t.n_counts || t.max_skip < 0 || !t.indexes ||
      (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF")))
    return o2m_rw_unsupported(rw, "TfIdfVectorizer with attributes it cannot take (mode '%s')", mode);
  int64_t c = dims[rank - 1], b = rank == 2 ? dims[0] : 1, out = 0, total = 0;
  for (int64_t g = 0; g < t.n_indexes; g++) out = t.indexes[g] + 1 > out ? t.indexes[g] + 1 : out;
  const int64_t row_shape[2] = {b, c};
  o2m_value *rows = xk_reshape(rw, x, row_shape, 2);
  /* the counts of every n-gram of the pool, in pool order: [B, G] */
  o2m_value *parts[64];
  int n_parts = 0;
  for (int64_t n = 1; n <= t.n_counts && n_parts < 64; n++) {
    int64_t first, grams;
    group_of(&t, n, &first, &grams);
    if (!grams) continue;
    o2m_value *part = n >= t.min_n && n <= t.max_n ? counts_of(rw, &t, rows, c, n, dt) : NULL;
    if (!part) { /* a length not counted, or no start fits: zeros */
      double *zeros = calloc((size_t)(b * grams), sizeof(double));
      const int64_t zdims[2] = {b, grams};
      part = zeros ? xk_const_nd(rw, O2M_DT_FLOAT, 2, zdims, zeros) : NULL;
      free(zeros);
    }
    if (!part) return xk_failed(rw);
    parts[n_parts++] = part;
    total += grams;
  }
  if (!n_parts || total > t.n_indexes) return o2m_rw_unsupported(rw, "TfIdfVectorizer's pool and ngram_indexes disagree");
  o2m_attr axis = o2m_rw_attr_int("axis", 1);
  o2m_value *counts = n_parts == 1 ? parts[0] : o2m_rw_op(rw, "Concat", n_parts, parts, &axis, 1);
  /* the mode's weighting */
  double *wv = malloc(((size_t)total + 1) * sizeof(double));
  double *place = calloc((size_t)(total * out) + 1, sizeof(double));
  if (!wv || !place) {
    free(wv);
    free(place);
    return xk_failed(rw);
  }
  for (int64_t g = 0; g < total; g++) {
    wv[g] = t.weights && g < t.n_weights ? t.weights[g] : 1.0;
    place[g * out + t.indexes[g]] = 1.0;
  }
  o2m_value *values = counts;
  if (!strcmp(mode, "IDF"))
    values = xk_where(rw, xk_op2(rw, "Greater", counts, xk_scalar(rw, O2M_DT_FLOAT, 0)),
                      xk_const_1d(rw, O2M_DT_FLOAT, wv, (int)total), xk_scalar(rw, O2M_DT_FLOAT, 0));
  else if (!strcmp(mode, "TFIDF") && t.weights)
    values = xk_op2(rw, "Mul", counts, xk_const_1d(rw, O2M_DT_FLOAT, wv, (int)total));
  const int64_t place_dims[2] = {total, out};
  o2m_value *y = xk_op2(rw, "MatMul", values, xk_const_nd(rw, O2M_DT_FLOAT, 2, place_dims, place));
  free(wv);
  free(place);
  if (rank == 1) {
    const int64_t flat[1] = {out};
    y = xk_reshape(rw, y, flat, 1);
  }
  return xk_bind(rw, 0, y);
}
