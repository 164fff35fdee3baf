/* test_child.c - one ONNX backend test, run inside the forked child:
 * load and infer the model, then for each test_data_set_*: read the
 * inputs and expected outputs, run the model through the plugin and
 * compare. Reports to the parent through `fd`, one line per record:
 *   RS 'P' <phase digit>                      as each phase starts
 *   RS 'R' <status> US <class> US <message>   once, at the end
 * (RS = 0x1e, US = 0x1f), so that a crash is pinned on its phase. Any
 * other text on the pipe is the child's stray stdout/stderr output.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/compare.h"
#include "core/core.h"
#include "exec/run.h"
#include "infer/infer.h"
#include "onnx/tensor_file.h"
#include "onnx/value_file.h"
#include "plugin/plugin.h"
#include "test_runner.h"
#include "util/diag.h"

typedef struct child {
  const test_case *test;
  const test_config *config;
  int fd;
  o2m_run_phase phase;
  o2m_diag diag;
  o2m_arena arena;
  int n_sets;
  char **sets; /* data set folders, sorted */
} child;

static void write_all(int fd, const char *buf, size_t n) {
  while (n) {
    ssize_t w = write(fd, buf, n);
    if (w <= 0) return;
    buf += w;
    n -= (size_t)w;
  }
}

static void on_phase(void *user, o2m_run_phase phase) {
  child *c = user;
  c->phase = phase;
  char rec[4] = {0x1e, 'P', (char)('0' + phase), '\n'};
  write_all(c->fd, rec, sizeof(rec));
}

/* The reason class of a failure in `phase` with `status`. */
const char *test_class_of(o2m_run_phase phase, o2m_status status) {
  static const char *const names[O2M_PHASE_COUNT] = {
      [O2M_PHASE_READ] = "read",       [O2M_PHASE_INFER] = "infer",     [O2M_PHASE_EMIT] = "emit",
      [O2M_PHASE_VERIFY] = "verify",   [O2M_PHASE_COMPILE] = "compile", [O2M_PHASE_RUN] = "run",
      [O2M_PHASE_COMPARE] = "mismatch",
  };
  if (phase == O2M_PHASE_EMIT && status == O2M_ERR_UNSUPPORTED) return "unsupported";
  return (unsigned)phase < O2M_PHASE_COUNT ? names[phase] : "run";
}

/* Sends the final record (message on one line) and ends the child. */
__attribute__((noreturn)) static void finish(child *c, test_status status, const char *klass,
                                             const char *message) {
  char rec[2300];
  int n = snprintf(rec, sizeof(rec), "\x1eR%d\x1f%s\x1f", (int)status, klass ? klass : "");
  for (const char *m = message ? message : ""; *m && n < (int)sizeof(rec) - 2; m++) {
    if (*m == '\n') { /* "a:\n  b\n  c" becomes "a: b; c" */
      while (m[1] == ' ') m++;
      if (n && rec[n - 1] != ':' && rec[n - 1] != ' ') rec[n++] = ';';
      if (n && rec[n - 1] != ' ') rec[n++] = ' ';
    } else {
      rec[n++] = *m == 0x1e || *m == 0x1f ? ' ' : *m;
    }
  }
  rec[n++] = '\n';
  write_all(c->fd, rec, (size_t)n);
  _exit(0);
}

__attribute__((noreturn)) static void fail(child *c, const char *klass) { finish(c, TEST_FAIL, klass, c->diag.message); }

/* ---- the test folder ---------------------------------------------------------- */

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_data_sets(child *c) {
  DIR *d = opendir(c->test->dir);
  if (!d) {
    o2m_fail(&c->diag, O2M_ERR_IO, "%s: cannot list the folder", c->test->dir);
    fail(c, "read");
  }
  int cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (strncmp(e->d_name, "test_data_set_", 14) != 0) continue;
    if (c->n_sets == cap) {
      cap = cap ? 2 * cap : 8;
      c->sets = o2m_arena_grow(&c->arena, c->sets, (size_t)c->n_sets, (size_t)cap, sizeof(char *));
    }
    if (c->sets) c->sets[c->n_sets] = o2m_arena_printf(&c->arena, "%s/%s", c->test->dir, e->d_name);
    if (!c->sets || !c->sets[c->n_sets++]) {
      closedir(d);
      o2m_fail(&c->diag, O2M_ERR_NOMEM, "out of memory");
      fail(c, "read");
    }
  }
  closedir(d);
  if (c->n_sets) qsort(c->sets, (size_t)c->n_sets, sizeof(char *), by_name);
}

/* Loads and infers the model. */
static o2m_model *load_model(child *c) {
  on_phase(c, O2M_PHASE_READ);
  char *path = o2m_arena_printf(&c->arena, "%s/model.onnx", c->test->dir);
  o2m_load_options lo = {NULL, 1};
  o2m_model *model = NULL;
  if (!path || o2m_model_load(path, &lo, &model, &c->diag)) fail(c, "read");
  on_phase(c, O2M_PHASE_INFER);
  if (o2m_infer_model(model, &c->diag)) fail(c, "infer");
  return model;
}

/* run takes tensors, sequences of tensors and optionals of those; maps
 * and deeper nesting are refused. */
static int io_supported(const o2m_type *t) {
  if (t->kind == O2M_TYPE_TENSOR || t->kind == O2M_TYPE_UNKNOWN) return 1;
  const o2m_type *in = t->inner;
  if (t->kind == O2M_TYPE_SEQUENCE) return !in || in->kind == O2M_TYPE_TENSOR || in->kind == O2M_TYPE_UNKNOWN;
  if (t->kind != O2M_TYPE_OPTIONAL || !in) return 0;
  if (in->kind == O2M_TYPE_SEQUENCE) return !in->inner || in->inner->kind == O2M_TYPE_TENSOR;
  return in->kind == O2M_TYPE_TENSOR;
}

static void check_tensor_io(child *c, const o2m_model *m) {
  const o2m_graph *g = m->graph;
  for (int i = 0; i < o2m_runtime_input_count(m) + g->n_outputs; i++) {
    int is_input = i < o2m_runtime_input_count(m);
    const o2m_value *v = is_input ? o2m_runtime_input(m, i) : g->output_values[i - o2m_runtime_input_count(m)];
    if (io_supported(&v->type)) continue;
    o2m_fail(&c->diag, O2M_ERR_UNSUPPORTED,
             "%s '%s' is not a tensor, a sequence of tensors nor an optional of those; run does not take it",
             is_input ? "input" : "output", v->name);
    fail(c, "unsupported");
  }
}

static int count_files(const char *dir, const char *prefix) {
  int n = 0;
  for (char path[4096];; n++) {
    snprintf(path, sizeof(path), "%s/%s_%d.pb", dir, prefix, n);
    if (access(path, F_OK) != 0) return n;
  }
}

/* Reads DIR/<prefix>_<i>.pb for i < want (exactly `want` files), each as a
 * value of the kind of values[i]. */
static o2m_io_value *read_files(child *c, const char *dir, const char *prefix, int want,
                                const o2m_value *const *values) {
  int have = count_files(dir, prefix);
  if (have != want) {
    o2m_fail(&c->diag, O2M_ERR_INVALID, "%s holds %d %s_<i>.pb files, the model has %d %ss", dir, have, prefix,
             want, prefix);
    fail(c, "read");
  }
  o2m_io_value *t = o2m_arena_array(&c->arena, (size_t)want + 1, sizeof(o2m_io_value));
  for (int i = 0; t && i < want; i++) {
    char *path = o2m_arena_printf(&c->arena, "%s/%s_%d.pb", dir, prefix, i);
    if (!path || o2m_read_value_file(&c->arena, path, values[i]->type.kind, &t[i], &c->diag)) fail(c, "read");
    if (t[i].kind == O2M_TYPE_OPTIONAL && !t[i].elem_kind && values[i]->type.inner)
      t[i].elem_kind = values[i]->type.inner->kind;
  }
  if (!t) {
    o2m_fail(&c->diag, O2M_ERR_NOMEM, "out of memory");
    fail(c, "read");
  }
  return t;
}

/* ONNX before 1.13 wrote bfloat16 test data as uint16 tensors (same
 * storage): they are read as the bfloat16 the model declares. */
static o2m_dtype elem_dtype(const o2m_type *t) {
  while (t && t->kind != O2M_TYPE_TENSOR) t = t->inner;
  return t ? t->elem : O2M_DT_UNDEFINED;
}

static void run_data_set(child *c, o2m_model *model, int set) {
  const char *dir = c->sets[set];
  on_phase(c, O2M_PHASE_READ);
  int n_in = o2m_runtime_input_count(model), n_out = model->graph->n_outputs;
  const o2m_value **in_values = o2m_arena_array(&c->arena, (size_t)n_in + 1, sizeof(o2m_value *));
  if (!in_values) {
    o2m_fail(&c->diag, O2M_ERR_NOMEM, "out of memory");
    fail(c, "read");
  }
  for (int i = 0; i < n_in; i++) in_values[i] = o2m_runtime_input(model, i);
  o2m_io_value *inputs = read_files(c, dir, "input", n_in, in_values);
  o2m_io_value *expected = read_files(c, dir, "output", n_out, (const o2m_value *const *)model->graph->output_values);
  o2m_tensor **flat = o2m_arena_array(&c->arena, (size_t)n_in + 1, sizeof(o2m_tensor *));
  int plain = 1;
  for (int i = 0; i < n_in; i++) {
    for (int k = 0; k < inputs[i].count; k++) {
      inputs[i].tensors[k]->name = in_values[i]->name;
      if (inputs[i].tensors[k]->dtype == O2M_DT_UINT16 && elem_dtype(&in_values[i]->type) == O2M_DT_BFLOAT16)
        inputs[i].tensors[k]->dtype = O2M_DT_BFLOAT16;
    }
    if (inputs[i].kind != O2M_TYPE_TENSOR) plain = 0;
    if (flat) flat[i] = inputs[i].kind == O2M_TYPE_TENSOR ? inputs[i].tensors[0] : NULL;
  }
  for (int i = 0; i < n_out; i++) {
    if (expected[i].kind != O2M_TYPE_TENSOR) plain = 0;
    for (int k = 0; k < expected[i].count; k++)
      if (expected[i].tensors[k]->dtype == O2M_DT_UINT16 &&
          elem_dtype(&model->graph->output_values[i]->type) == O2M_DT_BFLOAT16)
        expected[i].tensors[k]->dtype = O2M_DT_BFLOAT16;
  }
  o2m_tensor **outputs = o2m_arena_array(&c->arena, (size_t)n_out + 1, sizeof(o2m_tensor *));
  o2m_io_value *got = o2m_arena_array(&c->arena, (size_t)n_out + 1, sizeof(o2m_io_value));
  o2m_run_options options = {c->config->target, c->config->opt_level, on_phase, c};
  if (!plain) {
    options.input_values = inputs;
    options.output_values = got;
  }
  o2m_run_phase phase = O2M_PHASE_EMIT;
  o2m_status s = outputs && got && flat
                     ? c->config->plugin->run_model(model, &options, n_in, (const o2m_tensor *const *)flat,
                                                    outputs, &c->arena, &phase, &c->diag)
                     : o2m_fail(&c->diag, O2M_ERR_NOMEM, "out of memory");
  if (s) fail(c, test_class_of(phase, s));
  on_phase(c, O2M_PHASE_COMPARE);
  for (int i = 0; i < n_out; i++) {
    const char *where = strrchr(dir, '/') + 1;
    char *what = o2m_arena_printf(&c->arena, "%s%soutput %d '%s'", c->n_sets > 1 ? where : "",
                                  c->n_sets > 1 ? ": " : "", i, model->graph->outputs[i].name);
    if (plain) {
      if (o2m_compare_tensors(outputs[i], expected[i].tensors[0], NULL, what ? what : "output", &c->diag))
        fail(c, "mismatch");
      continue;
    }
    const o2m_io_value *e = &expected[i], *g = &got[i];
    if (g->kind != e->kind || g->present != e->present || (g->present && g->count != e->count)) {
      o2m_fail(&c->diag, O2M_ERR_INVALID, "%s: got %s of %d tensor%s (%s), expected %s of %d (%s)",
               what ? what : "output", g->kind == O2M_TYPE_SEQUENCE ? "a sequence" : g->kind == O2M_TYPE_OPTIONAL ? "an optional" : "a tensor",
               g->count, g->count == 1 ? "" : "s", g->present ? "present" : "empty",
               e->kind == O2M_TYPE_SEQUENCE ? "a sequence" : e->kind == O2M_TYPE_OPTIONAL ? "an optional" : "a tensor",
               e->count, e->present ? "present" : "empty");
      fail(c, "mismatch");
    }
    for (int k = 0; g->present && k < g->count; k++) {
      char *each = o2m_arena_printf(&c->arena, "%s element %d", what ? what : "output", k);
      if (o2m_compare_tensors(g->tensors[k], e->tensors[k], NULL, each ? each : "output", &c->diag))
        fail(c, "mismatch");
    }
  }
}

void test_child_main(const test_case *test, const test_config *config, int fd) {
  child c = {.test = test, .config = config, .fd = fd};
  list_data_sets(&c);
  o2m_model *model = load_model(&c);
  if (!c.n_sets) finish(&c, TEST_SKIP, NULL, "no test_data_set_* folder");
  check_tensor_io(&c, model);
  for (int set = 0; set < c.n_sets; set++) {
    if (set) { /* running rewrites the model: start from a fresh load */
      o2m_model_free(model);
      model = load_model(&c);
    }
    run_data_set(&c, model, set);
  }
  finish(&c, TEST_PASS, NULL, NULL);
}
