/* session_variants.c - what a session knows of its model and the code it
 * compiled for it (see include/onnx2mlir.h, "Variants").
 *
 * Owns: loading the model (once as declared, and afresh for each variant,
 * which specialising rewrites), the description of the inputs, the check
 * of a call's inputs against it, the key of the variant a call needs, and
 * the variants: found under the session's lock, made under its compile
 * lock (a call on an existing variant never waits for a compile), dropped
 * least recently used first past max_variants, freed when the last call
 * using one returns. Compiling itself is o2m_run_prepare's (run.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "emit/emit.h"
#include "emit/linalg/lower.h"
#include "exec/exec_internal.h"
#include "exec/session_internal.h"
#include "ir/type_text.h"
#include "util/diag.h"
#include "util/hash.h"

/* ---- the model ------------------------------------------------------------ */

char *session_default_cache_dir(const char *given) {
  if (given && *given) return strdup(given);
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char path[4096];
  if (xdg && *xdg) snprintf(path, sizeof(path), "%s/onnx2mlir", xdg);
  else if (home && *home) snprintf(path, sizeof(path), "%s/.cache/onnx2mlir", home);
  else return NULL;
  return strdup(path);
}

o2m_status session_load_model(const session *s, o2m_model **out, o2m_diag *diag) {
  o2m_load_options lo = {s->data_dir, 0};
  if (s->path) return o2m_model_load(s->path, &lo, out, diag);
  return o2m_model_load_bytes(s->bytes, s->size, s->name, NULL, &lo, out, diag);
}

o2m_status session_describe(session *s, o2m_diag *diag) {
  o2m_model *m = s->model;
  s->n_inputs = o2m_model_input_count(m);
  s->n_outputs = o2m_model_output_count(m);
  s->input_desc = o2m_arena_array(&m->arena, (size_t)s->n_inputs + 1, sizeof(o2m_value_desc));
  s->output_desc = o2m_arena_array(&m->arena, (size_t)s->n_outputs + 1, sizeof(o2m_value_desc));
  s->may_be_parameter = o2m_arena_array(&m->arena, (size_t)s->n_inputs + 1, 1);
  if (!s->input_desc || !s->output_desc || !s->may_be_parameter) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < s->n_inputs; i++) {
    o2m_value_desc *d = &s->input_desc[i];
    o2m_status st = o2m_model_input(m, i, d, diag);
    if (st) return st;
    if (!d->is_tensor)
      return o2m_fail(diag, O2M_ERR_UNSUPPORTED,
                      "%s: input '%s' is %s; sessions take tensor inputs (`onnx2mlir run` takes sequences and optionals)",
                      s->name, d->name, d->type);
    if (d->rank < 0 || !d->dtype) s->has_dynamic = 1;
    for (int k = 0; k < d->rank; k++) s->has_dynamic |= d->dims[k] < 0;
    /* a one-element stand-in: whether some value could be folded in */
    int64_t one = 1;
    o2m_tensor probe = {.dtype = d->dtype ? (o2m_dtype)d->dtype : O2M_DT_INT64, .rank = 1, .dims = &one, .count = 1};
    s->may_be_parameter[i] = (unsigned char)o2m_input_is_parameter(m, i, &probe);
  }
  for (int i = 0; i < s->n_outputs; i++) {
    o2m_status st = o2m_model_output(m, i, &s->output_desc[i], diag);
    if (st) return st;
    if (!s->output_desc[i].is_tensor)
      return o2m_fail(diag, O2M_ERR_UNSUPPORTED,
                      "%s: output '%s' is %s; sessions give tensor outputs (`onnx2mlir run` writes sequences and optionals)",
                      s->name, s->output_desc[i].name, s->output_desc[i].type);
  }
  return O2M_OK;
}

/* ---- a call's inputs ------------------------------------------------------ */

o2m_status session_check_input(const char *model_name, int i, const o2m_value_desc *want, const o2m_tensor_data *d,
                               o2m_arena *arena, o2m_tensor **out, o2m_diag *diag) {
  if (d->name && strcmp(d->name, want->name) != 0)
    return o2m_fail(diag, O2M_ERR_USAGE, "%s: input %d is '%s', not '%s'", model_name, i, want->name, d->name);
  int known = d->dtype > 0 && d->dtype < O2M_DT_COUNT;
  int bits = known ? o2m_dtype_bits((o2m_dtype)d->dtype) : 0;
  if (!known || (want->dtype && d->dtype != want->dtype))
    return o2m_fail(diag, O2M_ERR_USAGE, "%s: input '%s' must be %s but was given dtype %s", model_name, want->name,
                    want->type, known ? o2m_dtype_name((o2m_dtype)d->dtype) : "(no ONNX dtype)");
  if ((bits < 8 && d->dtype != O2M_DT_BOOL) || d->dtype == O2M_DT_STRING)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: input '%s': sessions do not take %s tensors", model_name, want->name,
                    o2m_dtype_name((o2m_dtype)d->dtype));
  if (d->rank < 0 || d->rank > 64 || (d->rank && !d->dims) || (want->rank >= 0 && d->rank != want->rank))
    return o2m_fail(diag, O2M_ERR_USAGE, "%s: input '%s' must be %s but was given rank %d", model_name, want->name,
                    want->type, d->rank);
  o2m_tensor *t = o2m_arena_alloc(arena, sizeof(*t));
  int64_t *dims = o2m_arena_array(arena, (size_t)d->rank + 1, sizeof(*dims));
  if (!t || !dims) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  memset(t, 0, sizeof(*t));
  int64_t count = 1;
  for (int k = 0; k < d->rank; k++) {
    int64_t n = d->dims[k];
    if (n < 0 || (n && count > INT64_MAX / 64 / n))
      return o2m_fail(diag, O2M_ERR_USAGE, "%s: input '%s': dim %d is %lld", model_name, want->name, k, (long long)n);
    if (want->rank == d->rank && want->dims[k] >= 0 && want->dims[k] != n)
      return o2m_fail(diag, O2M_ERR_USAGE, "%s: input '%s' must be %s but its dim %d is %lld", model_name, want->name,
                      want->type, k, (long long)n);
    count *= dims[k] = n;
  }
  size_t size = (size_t)count * (size_t)(bits < 8 ? 1 : bits / 8);
  if (d->nbytes != size || (size && !d->data))
    return o2m_fail(diag, O2M_ERR_USAGE, "%s: input '%s' holds %zu bytes%s; %s of %lld elements takes %zu", model_name,
                    want->name, d->nbytes, size && !d->data ? " at NULL" : "", o2m_dtype_name((o2m_dtype)d->dtype),
                    (long long)count, size);
  *t = (o2m_tensor){.name = want->name, .dtype = (o2m_dtype)d->dtype, .rank = d->rank, .dims = dims,
                    .count = count, .data = d->data, .nbytes = d->nbytes, .origin = O2M_DATA_INLINE};
  *out = t;
  return O2M_OK;
}

/* Dims that share a name must have one size across the inputs. */
static o2m_status check_named_dims(const session *s, o2m_tensor *const *given, o2m_diag *diag) {
  for (int i = 0; i < s->n_inputs; i++)
    for (int k = 0; k < s->input_desc[i].rank; k++) {
      const char *name = s->input_desc[i].dim_names ? s->input_desc[i].dim_names[k] : NULL;
      for (int j = 0; name && j <= i; j++)
        for (int l = 0; l < (j < i ? s->input_desc[j].rank : k); l++) {
          const char *other = s->input_desc[j].dim_names ? s->input_desc[j].dim_names[l] : NULL;
          if (!other || strcmp(name, other) != 0 || given[i]->dims[k] == given[j]->dims[l]) continue;
          return o2m_fail(diag, O2M_ERR_USAGE,
                          "%s: dim '%s' is %lld in input '%s' (dim %d) but %lld in input '%s' (dim %d)", s->name, name,
                          (long long)given[j]->dims[l], s->input_desc[j].name, l, (long long)given[i]->dims[k],
                          s->input_desc[i].name, k);
        }
    }
  return O2M_OK;
}

o2m_status session_check_inputs(const session *s, int n, const o2m_tensor_data *inputs, o2m_arena *arena,
                                o2m_tensor ***out, o2m_diag *diag) {
  if (n != s->n_inputs || (n && !inputs))
    return o2m_fail(diag, O2M_ERR_USAGE, "%s: the model takes %d input%s but %d %s given", s->name, s->n_inputs,
                    s->n_inputs == 1 ? "" : "s", inputs ? n : 0, (inputs ? n : 0) == 1 ? "was" : "were");
  o2m_tensor **given = o2m_arena_array(arena, (size_t)n + 1, sizeof(*given));
  if (!given) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    o2m_status st = session_check_input(s->name, i, &s->input_desc[i], &inputs[i], arena, &given[i], diag);
    if (st) return st;
  }
  o2m_status st = check_named_dims(s, given, diag);
  if (!st) *out = given;
  return st;
}

/* ---- keys ----------------------------------------------------------------- */

typedef struct key_text {
  char *buf;
  size_t len, cap;
} key_text;

/* Appends fmt, which reads up to two long long arguments. */
static int key_add(key_text *k, const char *fmt, long long a, long long b) {
  char piece[64];
  int n = snprintf(piece, sizeof(piece), fmt, a, b);
  if (k->len + (size_t)n + 1 > k->cap) {
    size_t cap = (k->cap ? 2 * k->cap : 256) + (size_t)n;
    char *buf = realloc(k->buf, cap);
    if (!buf) return -1;
    k->buf = buf, k->cap = cap;
  }
  memcpy(k->buf + k->len, piece, (size_t)n + 1);
  k->len += (size_t)n;
  return 0;
}

/* "G" or "S", then per input its dtype and rank (generic) or dims, and
 * the value of an input that acts as a parameter (hashed, with its dims);
 * *params_hash receives the hash of those values alone. */
static char *make_key(const session *s, const o2m_tensor *const *in, int generic, uint64_t *params_hash) {
  key_text k = {0};
  uint64_t h = 0;
  int bad = key_add(&k, generic ? "G" : "S", 0, 0);
  for (int i = 0; i < s->n_inputs && !bad; i++) {
    const o2m_tensor *t = in[i];
    int parameter = s->may_be_parameter[i] && o2m_input_is_parameter(s->model, i, t);
    bad |= key_add(&k, "|%lld:%lld", t->dtype, t->rank);
    for (int d = 0; (parameter || !generic) && d < t->rank && !bad; d++) bad |= key_add(&k, ",%lld", t->dims[d], 0);
    if (parameter) {
      uint64_t v = t->data ? o2m_hash_bytes(t->data, t->nbytes, (uint64_t)i) : (uint64_t)i;
      h = o2m_hash_bytes(&v, sizeof(v), h);
      bad |= key_add(&k, "=%llx", (long long)v, 0);
    }
  }
  *params_hash = h;
  if (bad) free(k.buf);
  return bad ? NULL : k.buf;
}

/* ---- variants ------------------------------------------------------------- */

static void variant_free(session_variant *v) {
  if (!v) return;
  o2m_exec_free(v->exec);
  o2m_model_free(v->model);
  o2m_arena_free(&v->arena);
  free(v->key);
  free(v);
}

/* Under s->lock: the variant of `key`, moved to the front, or NULL. */
static session_variant *find_locked(session *s, const char *key) {
  for (session_variant **p = &s->variants; *p; p = &(*p)->next) {
    session_variant *v = *p;
    if (strcmp(v->key, key) != 0) continue;
    *p = v->next;
    v->next = s->variants;
    s->variants = v;
    return v;
  }
  return NULL;
}

/* The variant of either key (the specialised one first) with a reference. */
static session_variant *find(session *s, const char *spec_key, const char *generic_key) {
  pthread_mutex_lock(&s->lock);
  session_variant *v = find_locked(s, spec_key);
  if (!v && generic_key) v = find_locked(s, generic_key);
  if (v) v->refs++;
  pthread_mutex_unlock(&s->lock);
  return v;
}

void session_variant_release(session *s, session_variant *v) {
  pthread_mutex_lock(&s->lock);
  int last = --v->refs == 0;
  pthread_mutex_unlock(&s->lock);
  if (last) variant_free(v);
}

/* Compiles (or loads from the disk cache) the variant for `inputs`. */
static o2m_status make_variant(session *s, const o2m_tensor *const *inputs, int generic, char *key, uint64_t params,
                               session_variant **out, o2m_diag *diag) {
  session_variant *v = calloc(1, sizeof(*v));
  if (!v) {
    free(key);
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  v->key = key;
  v->generic = generic;
  v->params = params;
  double t0 = exec_now_ms();
  o2m_run_options ro = {.target = s->options.target, .opt_level = s->options.opt_level, .repeat = 1,
                        .cache_dir = s->cache_dir, .generic = generic};
  o2m_run_timings timings = {0};
  o2m_status st = session_load_model(s, &v->model, diag);
  if (!st) st = o2m_run_prepare(v->model, &ro, s->n_inputs, inputs, &v->exec, &timings, NULL, diag);
  if (!st) st = o2m_run_weights(v->exec, v->model, &v->arena, &v->n_args, &v->args, diag);
  if (st) {
    variant_free(v);
    return st;
  }
  v->refs = 1; /* the list's */
  pthread_mutex_lock(&s->lock);
  s->stats.compile_ms += exec_now_ms() - t0;
  if (timings.cache == O2M_CACHE_HIT) s->stats.cache_loads++;
  else s->stats.compiles++;
  pthread_mutex_unlock(&s->lock);
  *out = v;
  return O2M_OK;
}

/* Puts v at the front of the list (with the caller's reference as well),
 * and drops the least recently used variants past max_variants. */
static void insert(session *s, session_variant *v) {
  session_variant *dropped = NULL;
  pthread_mutex_lock(&s->lock);
  v->next = s->variants;
  s->variants = v;
  v->refs++;
  s->n_variants++;
  while (s->n_variants > s->options.max_variants) {
    session_variant **p = &s->variants;
    while ((*p)->next) p = &(*p)->next;
    session_variant *last = *p;
    *p = NULL;
    s->n_variants--;
    s->stats.evictions++;
    if (--last->refs == 0) last->next = dropped, dropped = last;
  }
  s->stats.variants = s->n_variants;
  s->stats.generic = 0;
  for (session_variant *w = s->variants; w; w = w->next) s->stats.generic |= w->generic;
  pthread_mutex_unlock(&s->lock);
  while (dropped) {
    session_variant *next = dropped->next;
    variant_free(dropped);
    dropped = next;
  }
}

/* Whether the next variant for these parameter values should be the
 * generic one: per the shapes mode; in AUTO once a specialised variant of
 * the same values exists (these values met other sizes before). */
static int wants_generic(session *s, uint64_t params) {
  if (!s->has_dynamic || s->options.shapes == O2M_SHAPES_SPECIALIZE) return 0;
  pthread_mutex_lock(&s->lock);
  int generic = !s->generic_refused;
  if (generic && s->options.shapes == O2M_SHAPES_AUTO) {
    generic = 0;
    for (session_variant *v = s->variants; v && !generic; v = v->next) generic = !v->generic && v->params == params;
  }
  pthread_mutex_unlock(&s->lock);
  return generic;
}

o2m_status session_variant_for(session *s, const o2m_tensor *const *inputs, session_variant **out, o2m_diag *diag) {
  uint64_t params = 0;
  char *spec_key = make_key(s, inputs, 0, &params);
  char *generic_key = s->has_dynamic ? make_key(s, inputs, 1, &params) : NULL;
  if (!spec_key || (s->has_dynamic && !generic_key)) {
    free(spec_key);
    free(generic_key);
    return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  }
  session_variant *v = find(s, spec_key, generic_key);
  o2m_status st = O2M_OK;
  if (!v) {
    pthread_mutex_lock(&s->compile_lock);
    v = find(s, spec_key, generic_key); /* made while this call waited */
    if (!v) {
      int generic = wants_generic(s, params);
      if (generic) {
        o2m_diag ignored = {0};
        st = make_variant(s, inputs, 1, generic_key, params, &v, &ignored);
        generic_key = NULL;
        if (st) {
          pthread_mutex_lock(&s->lock);
          s->generic_refused = 1;
          snprintf(s->generic_refusal, sizeof(s->generic_refusal), "%s", ignored.message);
          s->stats.generic_refused = s->generic_refusal;
          pthread_mutex_unlock(&s->lock);
        }
      }
      if (!v) {
        st = make_variant(s, inputs, 0, spec_key, params, &v, diag);
        spec_key = NULL;
      }
      if (!st) insert(s, v);
      else v = NULL;
    }
    pthread_mutex_unlock(&s->compile_lock);
  }
  free(spec_key);
  free(generic_key);
  if (st) return st;
  *out = v;
  return O2M_OK;
}

/* ---- creating and freeing ---------------------------------------------------- */

o2m_status session_prepare(session *s, o2m_diag *diag) {
  int eager = !s->has_dynamic;
  for (int i = 0; eager && i < s->n_inputs; i++) eager = !s->may_be_parameter[i];
  if (eager) { /* every size is known: compile now, on stand-ins without data */
    o2m_arena arena = {0};
    o2m_tensor **probes = o2m_arena_array(&arena, (size_t)s->n_inputs + 1, sizeof(*probes));
    o2m_status st = probes ? O2M_OK : o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < s->n_inputs; i++) {
      const o2m_value_desc *d = &s->input_desc[i];
      o2m_tensor *t = probes[i] = o2m_arena_alloc(&arena, sizeof(*t));
      if (!t) {
        st = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
        break;
      }
      int64_t count = 1;
      for (int k = 0; k < d->rank; k++) count *= d->dims[k];
      *t = (o2m_tensor){.name = d->name, .dtype = (o2m_dtype)d->dtype, .rank = d->rank, .dims = (int64_t *)d->dims, .count = count};
    }
    session_variant *v = NULL;
    if (!st) st = session_variant_for(s, (const o2m_tensor *const *)probes, &v, diag);
    if (!st) session_variant_release(s, v);
    o2m_arena_free(&arena);
    return st;
  }
  /* else the first call compiles; whether the target lowers every node is
   * checked now, on a fresh load */
  o2m_model *m = NULL;
  o2m_status st = session_load_model(s, &m, diag);
  if (!st) st = s->options.target == O2M_TARGET_TOSA ? o2m_tosa_prepare(m, diag) : o2m_linalg_prepare(m, o2m_run_linalg_flags(0), diag);
  o2m_model_free(m);
  return st;
}

void session_destroy(session *s) {
  while (s->variants) {
    session_variant *next = s->variants->next;
    variant_free(s->variants);
    s->variants = next;
  }
  o2m_model_free(s->model);
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->compile_lock);
  free(s->path);
  free(s->name);
  free(s->data_dir);
  free(s->cache_dir);
  free(s->bytes);
  free(s);
}
