/* session_test.c - the session API (o2m_session_*) against the one-shot
 * o2m_model_run, from one thread and from many.
 *
 *   session_test CNN.onnx MODELS_DIR [THREADS CALLS]
 *
 * CNN.onnx takes float[batch,1,28,28] (examples/small_cnn.onnx); MODELS_DIR
 * holds what make_session_models.py writes. Checks:
 *   sizes     batches 1..4 through one session equal o2m_model_run's
 *             outputs; compiles per shapes mode: auto 2, generic 1,
 *             specialize 4; run_into gives the same bytes
 *   threads   THREADS threads x CALLS calls of mixed batches on one
 *             session whose calls use 2 kernel threads: each output
 *             equals the output of the same batch's first call bitwise
 *   tosa      the TOSA target's session against o2m_model_run on TOSA
 *   bytes     a session made from the model's bytes
 *   errors    every bad call gives its status and a message naming the
 *             input; a freed session is refused; a model with unsupported
 *             nodes fails at creation listing both
 *   params    an input read as a shape: one variant per value
 * Prints "PASS name" / "FAIL name: why" per check, then
 * "session: N passed, M failed"; exits non-zero on a failure.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnx2mlir.h>

static int passed, failed;
static _Thread_local char why[4096];

static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  return 0;
}

static void check(const char *name, int ok) {
  if (ok) {
    printf("PASS %s\n", name);
    passed++;
  } else {
    printf("FAIL %s: %s\n", name, why);
    failed++;
  }
  why[0] = '\0';
}

static const char *cnn;
static char models[2048];

static char *model_path(const char *name) {
  static char path[4096];
  snprintf(path, sizeof(path), "%s/%s", models, name);
  return path;
}

/* A deterministic image batch. */
static float *images(int batch) {
  float *x = malloc(sizeof(float) * 784 * (size_t)batch);
  for (int i = 0; i < 784 * batch; i++) x[i] = (float)((i * 7919) % 255) / 255.0f - 0.25f * (float)(i % 3);
  return x;
}

static o2m_tensor_data image_input(int batch, int64_t *dims, const float *x) {
  dims[0] = batch, dims[1] = 1, dims[2] = 28, dims[3] = 28;
  return (o2m_tensor_data){"image", 1, 4, dims, x, sizeof(float) * 784 * (size_t)batch};
}

/* The one-shot path's probabilities for a batch (10 floats each). */
static int reference(const char *path, o2m_target target, int batch, float *out) {
  o2m_diag d = {0};
  o2m_model *m = NULL;
  if (o2m_model_load(path, NULL, &m, &d)) return fail("load: %s", d.message);
  int64_t dims[4];
  float *x = images(batch);
  o2m_tensor_data in = image_input(batch, dims, x);
  o2m_run_config config = {target, 2};
  o2m_results *r = NULL;
  int ok = o2m_model_run(m, &config, 1, &in, &r, &d) == O2M_OK;
  if (ok) memcpy(out, o2m_results_get(r, 0)->data, sizeof(float) * 10 * (size_t)batch);
  else fail("o2m_model_run: %s", d.message);
  o2m_results_free(r);
  o2m_model_free(m);
  free(x);
  return ok;
}

static int close_to(const float *a, const float *b, int n, const char *what) {
  for (int i = 0; i < n; i++)
    if (fabsf(a[i] - b[i]) > 1e-5f + 1e-4f * fabsf(b[i]))
      return fail("%s: element %d is %g, the reference %g", what, i, a[i], b[i]);
  return 1;
}

/* Runs one batch through the session into out (10 floats a row). */
static int session_batch(o2m_session *s, int batch, float *out, o2m_diag *d) {
  int64_t dims[4];
  float *x = images(batch);
  o2m_tensor_data in = image_input(batch, dims, x);
  o2m_results *r = NULL;
  int ok = o2m_session_run(s, 1, &in, &r, d) == O2M_OK;
  const o2m_tensor_data *y = ok ? o2m_results_get(r, 0) : NULL;
  if (ok && (!y || y->rank != 2 || y->dims[0] != batch || y->dims[1] != 10 || y->dtype != 1 ||
             strcmp(y->name, "probs") != 0))
    ok = fail("batch %d: the output is not float probs[%d,10]", batch, batch);
  else if (ok)
    memcpy(out, y->data, sizeof(float) * 10 * (size_t)batch);
  else
    fail("batch %d: %s", batch, d->message);
  o2m_results_free(r);
  free(x);
  return ok;
}

static int sizes(o2m_session_shapes mode, int want_compiles) {
  o2m_diag d = {0};
  o2m_session_options o = {.no_cache = 1, .shapes = mode};
  o2m_session *s = NULL;
  if (o2m_session_create(cnn, &o, &s, &d)) return fail("create: %s", d.message);
  int ok = 1;
  for (int round = 0; round < 2 && ok; round++)
    for (int batch = 1; batch <= 4 && ok; batch++) {
      float got[40], want[40];
      ok = session_batch(s, batch, got, &d) && reference(cnn, O2M_TARGET_LINALG, batch, want) &&
           close_to(got, want, 10 * batch, "probs");
    }
  o2m_session_stats st;
  if (ok && o2m_session_get_stats(s, &st, &d)) ok = fail("stats: %s", d.message);
  if (ok && (st.compiles != want_compiles || st.calls != 8))
    ok = fail("%lld compiles and %lld calls, not %d and 8", (long long)st.compiles, (long long)st.calls, want_compiles);
  if (ok && mode == O2M_SHAPES_AUTO && !st.generic) ok = fail("no generic variant after four sizes");
  /* run_into: the same bytes into the caller's buffer; too small a one is refused */
  float into[30], direct[30];
  int64_t dims[4];
  float *x = images(3);
  o2m_tensor_data in = image_input(3, dims, x);
  o2m_output_buffer b = {into, sizeof(into)};
  if (ok && o2m_session_run_into(s, 1, &in, 1, &b, &d)) ok = fail("run_into: %s", d.message);
  if (ok && !session_batch(s, 3, direct, &d)) ok = 0;
  if (ok && (b.rank != 2 || b.dims[0] != 3 || b.nbytes != sizeof(into) || memcmp(into, direct, sizeof(into)) != 0))
    ok = fail("run_into gave other bytes or dims than run");
  o2m_output_buffer small = {into, 16};
  if (ok && (o2m_session_run_into(s, 1, &in, 1, &small, &d) != O2M_ERR_USAGE || small.nbytes != sizeof(into) ||
             !strstr(d.message, "probs")))
    ok = fail("a small buffer: %s", d.message);
  free(x);
  o2m_session_free(s);
  return ok;
}

/* ---- threads ----------------------------------------------------------- */

typedef struct worker {
  o2m_session *s;
  int calls, seed, bad;
  const float *expected[5]; /* per batch, from one thread */
  char message[4096];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  o2m_diag d = {0};
  for (int i = 0; i < w->calls && !w->bad; i++) {
    int batch = 1 + (w->seed * 31 + i * 17) % 4;
    float got[40];
    if (!session_batch(w->s, batch, got, &d)) {
      w->bad = 1;
      snprintf(w->message, sizeof(w->message), "%s", why);
    } else if (memcmp(got, w->expected[batch], sizeof(float) * 10 * (size_t)batch) != 0) {
      w->bad = 1;
      snprintf(w->message, sizeof(w->message), "call %d (batch %d) differs from the one-thread output", i, batch);
    }
  }
  return NULL;
}

static int threads(int n_threads, int calls) {
  o2m_diag d = {0};
  o2m_session_options o = {.no_cache = 1, .threads = 2}; /* each call's kernels on two threads too */
  o2m_session *s = NULL;
  if (o2m_session_create(cnn, &o, &s, &d)) return fail("create: %s", d.message);
  static float expected[5][40];
  int ok = 1;
  for (int batch = 1; batch <= 4 && ok; batch++) ok = session_batch(s, batch, expected[batch], &d);
  worker *w = calloc((size_t)n_threads, sizeof(*w));
  pthread_t *t = calloc((size_t)n_threads, sizeof(*t));
  for (int i = 0; ok && i < n_threads; i++) {
    w[i] = (worker){s, calls, i, 0, {0}, ""};
    for (int b = 1; b <= 4; b++) w[i].expected[b] = expected[b];
    pthread_create(&t[i], NULL, work, &w[i]);
  }
  for (int i = 0; ok && i < n_threads; i++) pthread_join(t[i], NULL);
  for (int i = 0; ok && i < n_threads; i++)
    if (w[i].bad) ok = fail("thread %d: %s", i, w[i].message);
  o2m_session_stats st;
  if (ok && !o2m_session_get_stats(s, &st, &d) && (st.compiles != 2 || st.calls != 4 + (int64_t)n_threads * calls))
    ok = fail("%lld compiles, %lld calls", (long long)st.compiles, (long long)st.calls);
  free(w);
  free(t);
  o2m_session_free(s);
  return ok;
}

/* ---- the quantized kernels from many threads ---------------------------------- */

/* The runtime's quantized kernels (rt_nbits.c, rt_qconv.c, rt_qmatmul.c,
 * rt_dynquant.c) called by threads at once through one session of each
 * quantized model: every call's first output equals the first call's to
 * the bit. The models are the contrib suite's (a float32 input of fixed
 * dims, filled here). */
typedef struct quant_worker {
  o2m_session *s;
  const o2m_tensor_data *in;
  const void *expected;
  size_t nbytes;
  int calls, bad;
  char message[4096];
} quant_worker;

static int first_output(o2m_session *s, const o2m_tensor_data *in, void **out, size_t *nbytes, o2m_diag *d) {
  o2m_results *r = NULL;
  int ok = o2m_session_run(s, 1, in, &r, d) == O2M_OK;
  const o2m_tensor_data *y = ok ? o2m_results_get(r, 0) : NULL;
  ok = y && (*out = malloc(y->nbytes ? y->nbytes : 1)) != NULL;
  if (ok) memcpy(*out, y->data, y->nbytes), *nbytes = y->nbytes;
  o2m_results_free(r);
  return ok;
}

static void *quant_work(void *arg) {
  quant_worker *w = arg;
  o2m_diag d = {0};
  for (int i = 0; i < w->calls && !w->bad; i++) {
    void *got = NULL;
    size_t n = 0;
    if (!first_output(w->s, w->in, &got, &n, &d))
      w->bad = 1, snprintf(w->message, sizeof(w->message), "call %d: %s", i, d.message);
    else if (n != w->nbytes || memcmp(got, w->expected, n) != 0)
      w->bad = 1, snprintf(w->message, sizeof(w->message), "call %d differs from the first call", i);
    free(got);
  }
  return NULL;
}

static int quantized_threads(int n_threads, int calls) {
  static const char *const quantized[] = {"tests/contrib/model_qdq_cnn_int8/model.onnx",
                                          "tests/contrib/model_dynamic_quant_mlp/model.onnx",
                                          "tests/contrib/model_qdq_attention_int8/model.onnx",
                                          "tests/contrib/matmul_nbits_kernel_4bit_rows_bias/model.onnx",
                                          "tests/contrib/matmul_nbits_kernel_4bit_row_bias/model.onnx"};
  int ok = 1;
  for (size_t m = 0; m < sizeof(quantized) / sizeof(quantized[0]) && ok; m++) {
    o2m_diag d = {0};
    o2m_session_options o = {.no_cache = 1, .threads = 2};
    o2m_session *s = NULL;
    o2m_value_desc x;
    if (o2m_session_create(quantized[m], &o, &s, &d) || o2m_session_input(s, 0, &x, &d))
      return fail("%s: %s", quantized[m], d.message);
    size_t count = 1;
    for (int k = 0; k < x.rank; k++) count *= (size_t)x.dims[k];
    float *data = malloc(count * sizeof(float));
    for (size_t i = 0; data && i < count; i++) data[i] = (float)((int)(i * 7919 % 201) - 100) / 50.0f;
    o2m_tensor_data in = {NULL, 1, x.rank, x.dims, data, count * sizeof(float)};
    void *expected = NULL;
    size_t nbytes = 0;
    ok = data && first_output(s, &in, &expected, &nbytes, &d);
    if (!ok) fail("%s: %s", quantized[m], d.message);
    quant_worker *w = calloc((size_t)n_threads, sizeof(*w));
    pthread_t *t = calloc((size_t)n_threads, sizeof(*t));
    for (int i = 0; ok && i < n_threads; i++) {
      w[i] = (quant_worker){s, &in, expected, nbytes, calls, 0, ""};
      pthread_create(&t[i], NULL, quant_work, &w[i]);
    }
    for (int i = 0; ok && i < n_threads; i++) pthread_join(t[i], NULL);
    for (int i = 0; ok && i < n_threads; i++)
      if (w[i].bad) ok = fail("%s, thread %d: %s", quantized[m], i, w[i].message);
    free(w);
    free(t);
    free(expected);
    free(data);
    o2m_session_free(s);
  }
  return ok;
}

/* Threads that create their own sessions and make the first variant at once. */
static void *first_calls(void *arg) {
  worker *w = arg;
  o2m_diag d = {0};
  float got[40];
  if (!session_batch(w->s, 2, got, &d)) w->bad = 1, snprintf(w->message, sizeof(w->message), "%s", why);
  else if (memcmp(got, w->expected[2], sizeof(float) * 20) != 0) w->bad = 1, snprintf(w->message, sizeof(w->message), "differs");
  return NULL;
}

static int concurrent_first_call(int n_threads) {
  o2m_diag d = {0};
  o2m_session_options o = {.no_cache = 1};
  o2m_session *s = NULL;
  float want[40];
  if (!reference(cnn, O2M_TARGET_LINALG, 2, want)) return 0;
  if (o2m_session_create(cnn, &o, &s, &d)) return fail("create: %s", d.message);
  worker w[16];
  pthread_t t[16];
  n_threads = n_threads > 16 ? 16 : n_threads;
  for (int i = 0; i < n_threads; i++) {
    w[i] = (worker){s, 1, i, 0, {0}, ""};
    w[i].expected[2] = want;
  }
  for (int i = 0; i < n_threads; i++) pthread_create(&t[i], NULL, first_calls, &w[i]);
  for (int i = 0; i < n_threads; i++) pthread_join(t[i], NULL);
  int ok = 1;
  for (int i = 0; i < n_threads && ok; i++)
    if (w[i].bad) ok = fail("thread %d: %s", i, w[i].message);
  o2m_session_stats st;
  if (ok && !o2m_session_get_stats(s, &st, &d) && st.compiles != 1)
    ok = fail("%lld compiles for one shape from %d threads", (long long)st.compiles, n_threads);
  o2m_session_free(s);
  return ok;
}

/* ---- other targets and sources ------------------------------------------ */

static int tosa(void) {
  o2m_diag d = {0};
  o2m_session_options o = {.target = O2M_TARGET_TOSA, .no_cache = 1};
  o2m_session *s = NULL;
  if (o2m_session_create(cnn, &o, &s, &d)) return fail("create: %s", d.message);
  float got[20], want[20];
  int ok = session_batch(s, 2, got, &d) && reference(cnn, O2M_TARGET_TOSA, 2, want) && close_to(got, want, 20, "tosa");
  o2m_session_free(s);
  return ok;
}

static int from_bytes(void) {
  FILE *f = fopen(cnn, "rb");
  if (!f) return fail("cannot read %s", cnn);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *bytes = malloc((size_t)n);
  size_t got_n = fread(bytes, 1, (size_t)n, f);
  fclose(f);
  o2m_diag d = {0};
  o2m_session *s = NULL;
  if (got_n != (size_t)n || o2m_session_create_from_bytes(bytes, (size_t)n, "cnn-in-memory", NULL, &s, &d))
    return fail("create: %s", d.message);
  memset(bytes, 0, (size_t)n); /* the session holds its own copy */
  free(bytes);
  float got[10], want[10];
  int ok = session_batch(s, 1, got, &d) && reference(cnn, O2M_TARGET_LINALG, 1, want) && close_to(got, want, 10, "bytes");
  o2m_value_desc in;
  if (ok && (o2m_session_input(s, 0, &in, &d) || strcmp(in.name, "image") != 0 || in.rank != 4 || in.dims[0] != -1 ||
             !in.dim_names[0] || strcmp(in.dim_names[0], "batch") != 0 || in.dims[1] != 1))
    ok = fail("the input's description: %s", d.message);
  o2m_session_free(s);
  return ok;
}

/* ---- errors ---------------------------------------------------------------- */

/* Expects `status` and a message holding `needle`. */
static int refused(o2m_status got, o2m_status want, const o2m_diag *d, const char *needle, const char *what) {
  if (got != want) return fail("%s: status %d, not %d (%s)", what, got, want, d->message);
  if (!strstr(d->message, needle)) return fail("%s: the message '%s' does not name '%s'", what, d->message, needle);
  return 1;
}

static int errors(void) {
  o2m_diag d = {0};
  o2m_session *s = NULL;
  if (o2m_session_create(cnn, NULL, &s, &d)) return fail("create: %s", d.message);
  int64_t dims[4] = {1, 1, 28, 28};
  float *x = images(1);
  o2m_tensor_data good = {"image", 1, 4, dims, x, 784 * 4};
  o2m_results *r = NULL;
  int ok = 1;
  o2m_tensor_data two[2] = {good, good};
  ok = ok && refused(o2m_session_run(s, 2, two, &r, &d), O2M_ERR_USAGE, &d, "takes 1 input", "two inputs");
  ok = ok && refused(o2m_session_run(s, 1, NULL, &r, &d), O2M_ERR_USAGE, &d, "takes 1 input", "no inputs");
  o2m_tensor_data bad = good;
  bad.name = "pixels";
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "'image', not 'pixels'", "name");
  bad = good, bad.dtype = 7;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "int64", "dtype");
  bad = good, bad.rank = 3;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "rank 3", "rank");
  int64_t wrong[4] = {1, 1, 28, 27};
  bad = good, bad.dims = wrong, bad.nbytes = 28 * 27 * 4;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "dim 3 is 27", "fixed dim");
  int64_t negative[4] = {-2, 1, 28, 28};
  bad = good, bad.dims = negative;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "dim 0 is -2", "negative dim");
  int64_t huge[4] = {INT64_MAX / 2, 1, 28, 28};
  bad = good, bad.dims = huge;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "dim 0 is", "huge dim");
  bad = good, bad.data = NULL;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "at NULL", "NULL data");
  bad = good, bad.nbytes = 100;
  ok = ok && refused(o2m_session_run(s, 1, &bad, &r, &d), O2M_ERR_USAGE, &d, "holds 100 bytes", "nbytes");
  ok = ok && refused(o2m_session_run(s, 1, &good, NULL, &d), O2M_ERR_USAGE, &d, "no place", "no results");
  o2m_value_desc desc;
  ok = ok && refused(o2m_session_input(s, 3, &desc, &d), O2M_ERR_USAGE, &d, "no input 3", "input index");
  /* the good call still works after all that */
  if (ok && o2m_session_run(s, 1, &good, &r, &d)) ok = fail("a good call after bad ones: %s", d.message);
  o2m_results_free(r);
  o2m_session_free(s);
  ok = ok && refused(o2m_session_run(s, 1, &good, &r, &d), O2M_ERR_USAGE, &d, "freed", "freed session");
  ok = ok && refused(o2m_session_input(s, 0, &desc, &d), O2M_ERR_USAGE, &d, "freed", "freed session input");
  o2m_session_free(s); /* twice: ignored */
  ok = ok && refused(o2m_session_run(NULL, 1, &good, &r, &d), O2M_ERR_USAGE, &d, "no session", "NULL session");
  o2m_session_options opt = {.target = O2M_TARGET_STABLEHLO};
  ok = ok && refused(o2m_session_create(cnn, &opt, &s, &d), O2M_ERR_USAGE, &d, "linalg or tosa", "target");
  ok = ok && refused(o2m_session_create(model_path("missing.onnx"), NULL, &s, &d), O2M_ERR_IO, &d, "missing.onnx",
                     "missing file");
  /* unsupported nodes: both listed at creation */
  o2m_status st = o2m_session_create(model_path("unsupported.onnx"), NULL, &s, &d);
  ok = ok && refused(st, O2M_ERR_UNSUPPORTED, &d, "first_unknown", "unsupported");
  ok = ok && refused(st, O2M_ERR_UNSUPPORTED, &d, "second_unknown", "unsupported (both)");
  /* dims that share a name */
  if (ok && o2m_session_create(model_path("shared_dim.onnx"), NULL, &s, &d)) ok = fail("shared_dim: %s", d.message);
  if (ok) {
    int64_t a_dims[2] = {2, 3}, b_dims[2] = {4, 3};
    float a[12] = {0}, b[12] = {0};
    o2m_tensor_data pair[2] = {{"a", 1, 2, a_dims, a, 24}, {"b", 1, 2, b_dims, b, 48}};
    ok = refused(o2m_session_run(s, 2, pair, &r, &d), O2M_ERR_USAGE, &d, "dim 'n' is 2 in input 'a'", "shared dim");
    b_dims[0] = 2, pair[1].nbytes = 24;
    if (ok && o2m_session_run(s, 2, pair, &r, &d)) ok = fail("shared dim, equal sizes: %s", d.message);
    o2m_results_free(r);
    o2m_session_free(s);
  }
  free(x);
  return ok;
}

/* An input read as Reshape's shape: its value is folded in, one variant
 * per value, each computing the right thing. */
static int params(void) {
  o2m_diag d = {0};
  o2m_session *s = NULL;
  o2m_session_options o = {.no_cache = 1};
  if (o2m_session_create(model_path("reshape_param.onnx"), &o, &s, &d)) return fail("create: %s", d.message);
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)i;
  int64_t x_dims[1] = {12}, s_dims[1] = {2};
  int64_t shapes[3][2] = {{3, 4}, {2, 6}, {3, 4}};
  int ok = 1;
  for (int k = 0; k < 3 && ok; k++) {
    o2m_tensor_data in[2] = {{"x", 1, 1, x_dims, x, sizeof(x)}, {"shape", 7, 1, s_dims, shapes[k], 16}};
    o2m_results *r = NULL;
    if (o2m_session_run(s, 2, in, &r, &d)) ok = fail("shape %lld,%lld: %s", (long long)shapes[k][0], (long long)shapes[k][1], d.message);
    const o2m_tensor_data *y = ok ? o2m_results_get(r, 0) : NULL;
    if (ok && (y->rank != 2 || y->dims[0] != shapes[k][0] || y->dims[1] != shapes[k][1]))
      ok = fail("shape %lld,%lld: the output is %lldx%lld", (long long)shapes[k][0], (long long)shapes[k][1],
                (long long)y->dims[0], (long long)y->dims[1]);
    for (int i = 0; ok && i < 12; i++)
      if (((const float *)y->data)[i] != 2.0f * x[i]) ok = fail("element %d", i);
    o2m_results_free(r);
  }
  o2m_session_stats st;
  if (ok && !o2m_session_get_stats(s, &st, &d) && st.compiles != 2)
    ok = fail("%lld compiles for two shape values", (long long)st.compiles);
  o2m_session_free(s);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: session_test CNN.onnx MODELS_DIR [THREADS CALLS]\n");
    return 2;
  }
  cnn = argv[1];
  snprintf(models, sizeof(models), "%s", argv[2]);
  int n_threads = argc > 3 ? atoi(argv[3]) : 8, calls = argc > 4 ? atoi(argv[4]) : 25;
  check("sizes auto", sizes(O2M_SHAPES_AUTO, 2));
  check("sizes generic", sizes(O2M_SHAPES_GENERIC, 1));
  check("sizes specialize", sizes(O2M_SHAPES_SPECIALIZE, 4));
  check("threads", threads(n_threads, calls));
  check("threads first call", concurrent_first_call(n_threads));
  check("quantized threads", quantized_threads(n_threads, calls / 5 + 1));
  check("tosa", tosa());
  check("bytes", from_bytes());
  check("errors", errors());
  check("params", params());
  printf("session: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
