/* session.c - o2m_session_* (include/onnx2mlir.h): a model compiled once
 * and called many times, from many threads.
 *
 * Owns: the session's life (a handle checked on every call, so that a
 * freed session is refused rather than read), the checks of each call's
 * inputs against the declared ones, and the calls themselves: the
 * variant a call needs (session_variants.c), its arguments (the inputs,
 * then the weights the variant reads in place), and the outputs as
 * results or in the caller's buffers. No call holds a lock while the
 * model runs.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "exec/exec.h"
#include "exec/session_internal.h"
#include "runtime/runtime.h"
#include "util/diag.h"

/* ---- handles ------------------------------------------------------------ */

/* A handle is (generation << 24 | slot + 1): a freed session's slot gets
 * a new generation, so its old handle no longer resolves. */
enum { SLOT_BITS = 24 };

static struct {
  pthread_mutex_t lock;
  session **slots;
  uint32_t *generations;
  int n, cap;
} registry = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0};

static o2m_session *handle_of(uint32_t generation, int slot) {
  return (o2m_session *)(uintptr_t)(((uint64_t)generation << SLOT_BITS) | (uint64_t)(slot + 1));
}

static o2m_status register_session(session *s, o2m_session **out, o2m_diag *diag) {
  pthread_mutex_lock(&registry.lock);
  int slot = 0;
  while (slot < registry.n && registry.slots[slot]) slot++;
  if (slot == registry.n && registry.n == registry.cap) {
    int cap = registry.cap ? 2 * registry.cap : 16;
    session **slots = cap < (1 << SLOT_BITS) - 1 ? realloc(registry.slots, (size_t)cap * sizeof(*slots)) : NULL;
    if (slots) registry.slots = slots;
    uint32_t *gens = slots ? realloc(registry.generations, (size_t)cap * sizeof(*gens)) : NULL;
    if (gens) registry.generations = gens;
    if (!slots || !gens) {
      pthread_mutex_unlock(&registry.lock);
      return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
    }
    for (int i = registry.cap; i < cap; i++) registry.slots[i] = NULL, registry.generations[i] = 1;
    registry.cap = cap;
  }
  if (slot == registry.n) registry.n++;
  registry.slots[slot] = s;
  s->refs = 1; /* the registry's */
  *out = handle_of(registry.generations[slot], slot);
  pthread_mutex_unlock(&registry.lock);
  return O2M_OK;
}

/* The session of a handle with a reference taken, or NULL (and the diag
 * filled) when the handle is not a live session's. */
static session *acquire(const o2m_session *handle, const char *fn, o2m_diag *diag) {
  if (diag) diag->status = O2M_OK, diag->message[0] = '\0'; /* a diag may serve many calls */
  uint64_t h = (uint64_t)(uintptr_t)handle;
  int slot = (int)(h & ((1u << SLOT_BITS) - 1)) - 1;
  uint32_t generation = (uint32_t)(h >> SLOT_BITS);
  session *s = NULL;
  pthread_mutex_lock(&registry.lock);
  if (handle && slot >= 0 && slot < registry.n && registry.generations[slot] == generation) s = registry.slots[slot];
  if (s) s->refs++;
  pthread_mutex_unlock(&registry.lock);
  if (!s)
    o2m_fail(diag, O2M_ERR_USAGE, "%s: %s", fn, handle ? "the session was freed (or is no session)" : "no session");
  return s;
}

static void release(session *s) {
  pthread_mutex_lock(&registry.lock);
  int last = --s->refs == 0;
  pthread_mutex_unlock(&registry.lock);
  if (last) session_destroy(s);
}

void o2m_session_free(o2m_session *handle) {
  uint64_t h = (uint64_t)(uintptr_t)handle;
  int slot = (int)(h & ((1u << SLOT_BITS) - 1)) - 1;
  uint32_t generation = (uint32_t)(h >> SLOT_BITS);
  session *s = NULL;
  pthread_mutex_lock(&registry.lock);
  if (handle && slot >= 0 && slot < registry.n && registry.generations[slot] == generation) {
    s = registry.slots[slot];
    registry.slots[slot] = NULL;
    registry.generations[slot]++;
  }
  pthread_mutex_unlock(&registry.lock);
  if (s) release(s);
}

/* ---- creating ------------------------------------------------------------ */

static char *copy_string(const char *s) { return s ? strdup(s) : NULL; }

static o2m_status create(const char *path, const void *bytes, size_t size, const char *name,
                         const o2m_session_options *options, o2m_session **out, o2m_diag *diag) {
  if (diag) diag->status = O2M_OK, diag->message[0] = '\0';
  if (!out) return o2m_fail(diag, O2M_ERR_USAGE, "o2m_session_create: no place for the session");
  *out = NULL;
  o2m_session_options o = options ? *options : (o2m_session_options){0};
  if (o.target == O2M_TARGET_TORCH) o.target = O2M_TARGET_LINALG;
  if (o.target != O2M_TARGET_LINALG && o.target != O2M_TARGET_TOSA)
    return o2m_fail(diag, O2M_ERR_USAGE, "a session runs the linalg or tosa target, not %s", o2m_target_name(o.target));
  if (o.opt_level < 0 || o.opt_level > 3)
    return o2m_fail(diag, O2M_ERR_USAGE, "opt_level %d: give 1, 2 or 3 (0: the default, 2)", o.opt_level);
  if (o.threads < 0) return o2m_fail(diag, O2M_ERR_USAGE, "threads %d: give 0 (the default) or more", o.threads);
  if (o.max_variants < 0) return o2m_fail(diag, O2M_ERR_USAGE, "max_variants %d is negative", o.max_variants);
  if ((unsigned)o.shapes > O2M_SHAPES_SPECIALIZE) return o2m_fail(diag, O2M_ERR_USAGE, "unknown shapes mode %d", o.shapes);
  session *s = calloc(1, sizeof(*s));
  if (!s) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->compile_lock, NULL);
  s->options = o;
  if (!o.opt_level) s->options.opt_level = 2;
  if (!o.max_variants) s->options.max_variants = 8;
  s->options.data_dir = s->data_dir = copy_string(o.data_dir);
  s->path = copy_string(path);
  s->name = copy_string(name ? name : path ? path : "<memory>");
  if (bytes && (s->bytes = malloc(size ? size : 1))) memcpy(s->bytes, bytes, size), s->size = size;
  o2m_status st = (path && !s->path) || !s->name || (o.data_dir && !s->data_dir) || (bytes && !s->bytes)
                      ? o2m_fail(diag, O2M_ERR_NOMEM, "out of memory")
                      : O2M_OK;
  if (!st && !o.no_cache && path) s->cache_dir = session_default_cache_dir(o.cache_dir);
  if (!st) st = session_load_model(s, &s->model, diag);
  if (!st) st = session_describe(s, diag);
  if (!st) st = session_prepare(s, diag);
  if (!st) st = register_session(s, out, diag);
  if (st) session_destroy(s);
  return st;
}

o2m_status o2m_session_create(const char *path, const o2m_session_options *options, o2m_session **out,
                              o2m_diag *diag) {
  if (!path) return o2m_fail(diag, O2M_ERR_USAGE, "o2m_session_create: no model path given");
  return create(path, NULL, 0, NULL, options, out, diag);
}

o2m_status o2m_session_create_from_bytes(const void *bytes, size_t size, const char *name_for_messages,
                                         const o2m_session_options *options, o2m_session **out, o2m_diag *diag) {
  if (!bytes) return o2m_fail(diag, O2M_ERR_USAGE, "o2m_session_create_from_bytes: no bytes given");
  return create(NULL, bytes, size, name_for_messages, options, out, diag);
}

/* ---- describing ---------------------------------------------------------- */

int o2m_session_input_count(const o2m_session *handle) {
  session *s = acquire(handle, "o2m_session_input_count", NULL);
  int n = s ? s->n_inputs : 0;
  if (s) release(s);
  return n;
}

int o2m_session_output_count(const o2m_session *handle) {
  session *s = acquire(handle, "o2m_session_output_count", NULL);
  int n = s ? s->n_outputs : 0;
  if (s) release(s);
  return n;
}

static o2m_status describe(const o2m_session *handle, int index, int output, o2m_value_desc *out, o2m_diag *diag) {
  const char *fn = output ? "o2m_session_output" : "o2m_session_input";
  session *s = acquire(handle, fn, diag);
  if (!s) return O2M_ERR_USAGE;
  int n = output ? s->n_outputs : s->n_inputs;
  o2m_status st = O2M_OK;
  if (!out || index < 0 || index >= n)
    st = o2m_fail(diag, O2M_ERR_USAGE, "%s: %s has no %s %d (it has %d)", fn, s->name, output ? "output" : "input",
                  index, n);
  else
    *out = output ? s->output_desc[index] : s->input_desc[index];
  release(s);
  return st;
}

o2m_status o2m_session_input(const o2m_session *session, int index, o2m_value_desc *out, o2m_diag *diag) {
  return describe(session, index, 0, out, diag);
}

o2m_status o2m_session_output(const o2m_session *session, int index, o2m_value_desc *out, o2m_diag *diag) {
  return describe(session, index, 1, out, diag);
}

o2m_status o2m_session_get_stats(const o2m_session *handle, o2m_session_stats *out, o2m_diag *diag) {
  session *s = acquire(handle, "o2m_session_get_stats", diag);
  if (!s) return O2M_ERR_USAGE;
  if (out) {
    pthread_mutex_lock(&s->lock);
    *out = s->stats;
    pthread_mutex_unlock(&s->lock);
  }
  release(s);
  return out ? O2M_OK : o2m_fail(diag, O2M_ERR_USAGE, "o2m_session_get_stats: no place for the statistics");
}

/* ---- calling ------------------------------------------------------------- */

/* Runs the model on checked inputs; the outputs land in `arena`. */
static o2m_status call(session *s, int n_inputs, const o2m_tensor_data *inputs, o2m_arena *arena, o2m_tensor ***out,
                       o2m_diag *diag) {
  o2m_tensor **given = NULL;
  o2m_status st = session_check_inputs(s, n_inputs, inputs, arena, &given, diag);
  session_variant *v = NULL;
  if (!st) st = session_variant_for(s, (const o2m_tensor *const *)given, &v, diag);
  if (st) return st;
  const o2m_tensor **args = o2m_arena_array(arena, (size_t)v->n_args + 1, sizeof(*args));
  o2m_tensor **outs = o2m_arena_array(arena, (size_t)s->n_outputs + 1, sizeof(*outs));
  if (!args || !outs) st = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; !st && i < v->n_args; i++) args[i] = i < n_inputs ? given[i] : v->args[i];
  if (!st) {
    int threads = o2m_rt_set_call_threads(s->options.threads);
    st = o2m_exec_call(v->exec, v->n_args, args, s->n_outputs, outs, arena, diag);
    o2m_rt_set_call_threads(threads);
  }
  session_variant_release(s, v);
  if (st) return st;
  o2m_run_label_outputs(s->model, outs);
  for (int i = 0; i < s->n_outputs; i++)
    if (!(outs[i]->name = o2m_arena_strdup(arena, s->output_desc[i].name))) return o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  pthread_mutex_lock(&s->lock);
  s->stats.calls++;
  pthread_mutex_unlock(&s->lock);
  *out = outs;
  return O2M_OK;
}

o2m_status o2m_session_run(o2m_session *handle, int n_inputs, const o2m_tensor_data *inputs, o2m_results **out,
                           o2m_diag *diag) {
  session *s = acquire(handle, "o2m_session_run", diag);
  if (!s) return O2M_ERR_USAGE;
  if (!out) {
    release(s);
    return o2m_fail(diag, O2M_ERR_USAGE, "o2m_session_run: no place for the results");
  }
  *out = NULL;
  o2m_results *r = calloc(1, sizeof(*r));
  o2m_tensor **outs = NULL;
  o2m_status st = r ? call(s, n_inputs, inputs, &r->arena, &outs, diag) : o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  if (!st && !(r->items = o2m_arena_array(&r->arena, (size_t)s->n_outputs + 1, sizeof(*r->items))))
    st = o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  for (int i = 0; !st && i < s->n_outputs; i++) {
    const o2m_tensor *t = outs[i];
    r->items[i] = (o2m_tensor_data){t->name, (int)t->dtype, t->rank, t->dims, t->data, t->nbytes};
  }
  if (!st) r->n = s->n_outputs, *out = r;
  else if (r) o2m_results_free(r);
  release(s);
  return st;
}

o2m_status o2m_session_run_into(o2m_session *handle, int n_inputs, const o2m_tensor_data *inputs, int n_outputs,
                                o2m_output_buffer *outputs, o2m_diag *diag) {
  session *s = acquire(handle, "o2m_session_run_into", diag);
  if (!s) return O2M_ERR_USAGE;
  o2m_status st = O2M_OK;
  if (n_outputs != s->n_outputs || (n_outputs && !outputs))
    st = o2m_fail(diag, O2M_ERR_USAGE, "o2m_session_run_into: %s has %d outputs but %d buffers were given", s->name,
                  s->n_outputs, outputs ? n_outputs : 0);
  o2m_arena arena = {0};
  o2m_tensor **outs = NULL;
  if (!st) st = call(s, n_inputs, inputs, &arena, &outs, diag);
  int fits = 1;
  for (int i = 0; !st && i < n_outputs; i++) {
    const o2m_tensor *t = outs[i];
    o2m_output_buffer *b = &outputs[i];
    b->dtype = (int)t->dtype, b->rank = t->rank, b->nbytes = t->nbytes;
    for (int k = 0; k < t->rank && k < O2M_MAX_RANK; k++) b->dims[k] = t->dims[k];
    if (t->rank > O2M_MAX_RANK || t->nbytes > b->capacity || (t->nbytes && !b->data)) fits = 0;
  }
  for (int i = 0; !st && !fits && i < n_outputs; i++) {
    const o2m_output_buffer *b = &outputs[i];
    if (b->rank > O2M_MAX_RANK || b->nbytes > b->capacity || (b->nbytes && !b->data))
      st = o2m_fail(diag, O2M_ERR_USAGE, "%s: output '%s' takes %zu bytes (rank %d) but its buffer holds %zu%s", s->name,
                    s->output_desc[i].name, b->nbytes, b->rank, b->data ? b->capacity : 0,
                    b->rank > O2M_MAX_RANK ? " and O2M_MAX_RANK dims" : "");
  }
  for (int i = 0; !st && i < n_outputs; i++)
    if (outs[i]->nbytes) memcpy(outputs[i].data, outs[i]->data, outs[i]->nbytes);
  o2m_arena_free(&arena);
  release(s);
  return st;
}
