/* cmd_run.c - `onnx2mlir run MODEL ...`: reads the inputs (.pb or .npy),
 * runs the model through the MLIR plugin (JIT) and writes the outputs as
 * output_<i>.pb / .npy or prints them; a model with sequence or optional
 * inputs or outputs goes through run_values.c. MODEL may also be an MLIR file in
 * the Linalg form (`import --to linalg` output, possibly edited), whose
 * inputs are then given by position. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/compare.h"
#include "core/core.h"
#include "onnx/tensor_file.h"
#include "onnx/value_file.h"
#include "plugin/plugin.h"
#include "util/diag.h"

static const char run_help[] =
    "usage: onnx2mlir run MODEL [--target linalg|tosa|stablehlo] [--input NAME=FILE]...\n"
    "                           [--inputs DIR] [-o OUTDIR] [--npy] [--data-dir DIR] [-O LEVEL]\n"
    "                           [--repeat N] [--threads N] [--timings] [--profile] [--no-cache]\n\n"
    "Compiles an ONNX model for the host (MLIR's JIT), specialised to the shapes of\n"
    "the given inputs, runs it once and writes or prints its outputs.\n\n"
    "  --target T        linalg (default); tosa (the TOSA module, run through\n"
    "                    upstream MLIR's tosa-to-linalg); stablehlo is refused: it runs\n"
    "                    in StableHLO's interpreter (see import --to stablehlo)\n"
    "  --inputs DIR      read input_<i>.pb, one per graph input without initializer,\n"
    "                    in graph order (the ONNX test layout): a TensorProto, or for\n"
    "                    a sequence or optional input a SequenceProto / OptionalProto\n"
    "  --input NAME=FILE the input NAME from FILE (.pb or, for a tensor, .npy; told\n"
    "                    apart by content); overrides --inputs\n"
    "  -o OUTDIR         write OUTDIR/output_<i>.pb in graph-output order (created if\n"
    "                    needed; sequences and optionals as SequenceProto /\n"
    "                    OptionalProto); without -o, print each output's name, type\n"
    "                    and first values (a sequence's element by element)\n"
    "  --npy             write output_<i>.npy instead (tensor outputs only)\n"
    "  --data-dir DIR    where the model's external data lives\n"
    "  -O LEVEL          LLVM optimisation level 0..3 (default 2)\n"
    "  --repeat N        call the compiled code N times (outputs: the last call's)\n"
    "                    and print to stderr the time of each step: load (reading\n"
    "                    the model), emit (specialising, emitting MLIR), compile\n"
    "                    (verifying, lowering, JIT), run (median and min per call)\n"
    "  --threads N       threads for each call (oneDNN's convolutions and products,\n"
    "                    the generated loops worth splitting; GNU OpenMP's pool);\n"
    "                    default: $ONNX2MLIR_THREADS, else the CPUs this process\n"
    "                    may use; 1: all on the calling thread\n"
    "  --timings         print to stderr where the time went, phase by phase: load,\n"
    "                    specialise, transform, emit, verify, each MLIR pass down to\n"
    "                    the LLVM dialect, LLVM IR and optimisation, code generation,\n"
    "                    and the calls\n"
    "  --profile         time each node of the graph (after the rewrite to the core\n"
    "                    op set) in the calls and print to stderr the nodes and op\n"
    "                    types that took the most (Linalg; the code is not cached);\n"
    "                    with --repeat N, the mean of the calls after the first\n"
    "                    (which also builds the kernels' state)\n"
    "  --no-cache        compile even when the cache holds this model's code, and\n"
    "                    store nothing. By default the compiled code is kept in\n"
    "                    $XDG_CACHE_HOME/onnx2mlir (else ~/.cache/onnx2mlir), keyed by\n"
    "                    the model's bytes, the input shapes, the options, the tool's\n"
    "                    version and the CPU: a second run of the same model and\n"
    "                    shapes loads it instead of compiling (Linalg and TOSA,\n"
    "                    tensor inputs); an entry that does not match is rebuilt;\n"
    "                    the cache keeps to ONNX2MLIR_CACHE_LIMIT_MB (2048) MiB,\n"
    "                    dropping the least recently used entries\n\n"
    "MODEL may be a .mlir/.mlirbc file in the Linalg form (as `import --to linalg`\n"
    "writes it): its @main is run, --inputs reads input_0.pb, input_1.pb, ... while\n"
    "they exist, and --input takes the argument's position as NAME.\n";

typedef struct run_args {
  const char *model, *target, *inputs_dir, *out_dir, *data_dir;
  int npy, opt_level;
  int repeat; /* 0: no --repeat (one call, no timings printed) */
  int timings; /* --timings: the phase-by-phase table */
  int no_cache;
  int profile; /* --profile: the time of each node */
  int threads; /* --threads N; 0: the default */
  double load_ms;
  int n_named;
  char **named; /* NAME=FILE, pointing into argv */
} run_args;

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int parse_args(int argc, char **argv, run_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (cli_flag_value(argc, argv, &i, "--target", &a->target)) {
      if (!a->target) return cli_usage_error("run", "--target needs a target");
    } else if (cli_flag_value(argc, argv, &i, "--inputs", &a->inputs_dir)) {
      if (!a->inputs_dir) return cli_usage_error("run", "--inputs needs a folder");
    } else if (cli_flag_value(argc, argv, &i, "--input", &v)) {
      if (!v || !strchr(v, '=') || v[0] == '=') return cli_usage_error("run", "--input needs NAME=FILE");
      a->named[a->n_named++] = (char *)v;
    } else if (cli_flag_value(argc, argv, &i, "-o", &a->out_dir)) {
      if (!a->out_dir) return cli_usage_error("run", "-o needs a folder");
    } else if (cli_flag_value(argc, argv, &i, "--data-dir", &a->data_dir)) {
      if (!a->data_dir) return cli_usage_error("run", "--data-dir needs a folder");
    } else if (cli_flag_value(argc, argv, &i, "-O", &v) || (strncmp(argv[i], "-O", 2) == 0 && (v = argv[i] + 2))) {
      if (!v || strlen(v) != 1 || v[0] < '0' || v[0] > '3') return cli_usage_error("run", "-O takes 0, 1, 2 or 3");
      a->opt_level = v[0] - '0';
    } else if (strcmp(argv[i], "--timings") == 0) {
      a->timings = 1;
    } else if (strcmp(argv[i], "--no-cache") == 0) {
      a->no_cache = 1;
    } else if (strcmp(argv[i], "--profile") == 0) {
      a->profile = 1;
    } else if (cli_flag_value(argc, argv, &i, "--repeat", &v)) {
      char *end = NULL;
      long n = v ? strtol(v, &end, 10) : 0;
      if (!v || *end || n < 1 || n > 1000000) return cli_usage_error("run", "--repeat takes a count from 1 to 1000000");
      a->repeat = (int)n;
    } else if (cli_flag_value(argc, argv, &i, "--threads", &v)) {
      char *end = NULL;
      long n = v ? strtol(v, &end, 10) : 0;
      if (!v || !*v || *end || n < 1 || n > 4096)
        return cli_usage_error("run", "--threads takes a count of threads from 1 to 4096");
      a->threads = (int)n;
    } else if (strcmp(argv[i], "--npy") == 0) {
      a->npy = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("run", "unknown option '%s'", argv[i]);
    } else if (a->model) {
      return cli_usage_error("run", "more than one model given");
    } else {
      a->model = argv[i];
    }
  }
  if (!a->model) return cli_usage_error("run", "no model given");
  return EXIT_OK;
}

static int out_of_memory(o2m_diag *diag) {
  o2m_fail(diag, O2M_ERR_NOMEM, "out of memory");
  return cli_report(diag);
}

/* ---- inputs ---------------------------------------------------------------- */

/* The index a --input NAME names: a runtime input of the model, or for an
 * MLIR file a position. -1 when there is none. */
static int input_index(const o2m_model *model, const char *name, size_t len, int n) {
  if (!model) {
    char *end;
    long i = strtol(name, &end, 10);
    return end == name + len && len && i >= 0 && i < n ? (int)i : -1;
  }
  for (int i = 0; i < n; i++) {
    const char *have = o2m_runtime_input(model, i)->name;
    if (strlen(have) == len && strncmp(have, name, len) == 0) return i;
  }
  return -1;
}

/* Fills inputs[0..n) from --inputs DIR, then the --input overrides. For a
 * model n is its runtime input count; for an MLIR file (model NULL) n
 * grows with the input_<i>.pb files present and the positions named. */
static int read_inputs(const run_args *a, const o2m_model *model, o2m_arena *arena, o2m_tensor **inputs,
                       int *n, int cap, o2m_diag *diag) {
  if (!model) {
    *n = 0;
    for (char path[4096]; a->inputs_dir && *n < cap; ++*n) {
      snprintf(path, sizeof(path), "%s/input_%d.pb", a->inputs_dir, *n);
      if (access(path, F_OK) != 0) break;
    }
    for (int k = 0; k < a->n_named; k++) {
      long pos = strtol(a->named[k], NULL, 10);
      if (pos >= *n && pos < cap) *n = (int)pos + 1;
    }
  }
  for (int i = 0; a->inputs_dir && i < *n; i++)
    if (cli_read_input_file(arena, a->inputs_dir, i, &inputs[i], diag)) return cli_report(diag);
  for (int k = 0; k < a->n_named; k++) {
    const char *eq = strchr(a->named[k], '=');
    int i = input_index(model, a->named[k], (size_t)(eq - a->named[k]), *n);
    if (i < 0)
      return cli_usage_error("run", model ? "the model has no input '%.*s'" : "'%.*s' is not an argument position",
                             (int)(eq - a->named[k]), a->named[k]);
    if (o2m_read_tensor_file(arena, eq + 1, &inputs[i], diag)) return cli_report(diag);
  }
  for (int i = 0; i < *n; i++) {
    const char *name = model ? o2m_runtime_input(model, i)->name : o2m_arena_printf(arena, "%d", i);
    if (!inputs[i])
      return cli_usage_error("run", "input '%s' is not given (--input %s=FILE or --inputs DIR)", name, name);
    inputs[i]->name = name;
  }
  return EXIT_OK;
}

/* ---- outputs ---------------------------------------------------------------- */

static int write_outputs(const run_args *a, int n, o2m_tensor **outputs, o2m_arena *arena, o2m_diag *diag) {
  if (!a->out_dir) {
    for (int i = 0; i < n; i++) cli_print_tensor(i, outputs[i]->name, outputs[i], "");
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_MODEL;
  }
  if (mkdir(a->out_dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "onnx2mlir: error: cannot create the folder '%s': %s\n", a->out_dir, strerror(errno));
    return EXIT_MODEL;
  }
  for (int i = 0; i < n; i++) {
    char *path = o2m_arena_printf(arena, "%s/output_%d.%s", a->out_dir, i, a->npy ? "npy" : "pb");
    if (!path) return out_of_memory(diag);
    if (o2m_write_tensor_file(outputs[i], path, a->npy ? O2M_FORMAT_NPY : O2M_FORMAT_PB, diag))
      return cli_report(diag);
  }
  return EXIT_OK;
}

/* ---- the command ------------------------------------------------------------- */

/* The folder of compiled code: $XDG_CACHE_HOME/onnx2mlir, else
 * ~/.cache/onnx2mlir; NULL with --no-cache or neither variable. */
static const char *cache_dir(const run_args *a, o2m_arena *arena) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (a->no_cache) return NULL;
  if (xdg && xdg[0] == '/') return o2m_arena_printf(arena, "%s/onnx2mlir", xdg);
  if (home && home[0] == '/') return o2m_arena_printf(arena, "%s/.cache/onnx2mlir", home);
  return NULL;
}

static const char *const cache_states[] = {"off", "code loaded from the cache", "code stored in the cache",
                                           "storing in the cache failed"};

/* --timings: each phase, the MLIR passes that took 1% of them or more. */
static void print_phase_table(const run_args *a, const o2m_run_timings *t) {
  const o2m_compile_times *d = &t->detail;
  double emit_only = t->emit_ms - t->infer_ms - t->transform_ms;
  double verify = t->compile_ms - t->passes_ms - t->llvm_ms;
  fprintf(stderr, "timings (ms):\n  %-34s %10.1f\n  %-34s %10.1f\n  %-34s %10.1f\n  %-34s %10.1f\n",
          "load", a->load_ms, "specialise (inference)", t->infer_ms, "transform", t->transform_ms, "emit MLIR",
          emit_only);
  fprintf(stderr, "  %-34s %10.1f\n  %-34s %10.1f\n", "verify, engine set-up", verify, "MLIR passes", t->passes_ms);
  double other = 0;
  for (int i = 0; i < d->n_passes; i++) {
    if (d->pass_ms[i] >= 0.01 * t->passes_ms)
      fprintf(stderr, "    %-32s %10.1f\n", d->pass_names[i], d->pass_ms[i]);
    else
      other += d->pass_ms[i];
  }
  if (other > 0) fprintf(stderr, "    %-32s %10.1f\n", "(the others)", other);
  fprintf(stderr, "  %-34s %10.1f\n  %-34s %10.1f\n", "LLVM IR and optimisation", d->llvm_ir_ms,
          "LLVM code generation, linking", d->llvm_codegen_ms);
  int n_units = d->units_at_level[0] + d->units_at_level[1] + d->units_at_level[2] + d->units_at_level[3];
  if (n_units) {
    fprintf(stderr, "    LLVM units: %d, by opt level:", n_units);
    for (int level = 0; level < 4; level++)
      if (d->units_at_level[level]) fprintf(stderr, " %d at O%d", d->units_at_level[level], level);
    fputc('\n', stderr);
  }
  if (d->part_calls)
    fprintf(stderr, "    @main's parts: %d calls of %d functions (repeated blocks compiled once), %d values passed on\n",
            d->part_calls, d->part_functions, d->part_results);
  if (d->split_loops)
    fprintf(stderr, "    loops split across threads: %d, of which %d copies of another (compiled once; %d in another part)\n",
            d->split_loops, d->split_loops_merged, d->split_loops_across);
  fprintf(stderr, "  %-34s %10.3f\n", t->runs > 1 ? "call (median)" : "call", t->run_median_ms);
  fprintf(stderr, "  cache: %s\n", cache_states[t->cache >= 0 && t->cache <= 3 ? t->cache : 0]);
}

typedef struct op_time {
  const char *op_type;
  double ms;
  int count;
} op_time;

static int by_time(const void *x, const void *y) {
  double a = ((const op_time *)x)->ms, b = ((const op_time *)y)->ms;
  return (a < b) - (a > b);
}

/* --profile: the slowest nodes, then the time by op type. */
static void print_profile(const o2m_model *model, const o2m_run_timings *t, o2m_arena *arena) {
  enum { SHOWN = 15 };
  const o2m_graph *g = model->graph;
  int n = t->n_nodes < g->n_nodes ? t->n_nodes : g->n_nodes;
  op_time *nodes = o2m_arena_array(arena, (size_t)n + 1, sizeof(op_time));
  op_time *types = o2m_arena_array(arena, (size_t)n + 1, sizeof(op_time));
  if (!t->node_ms || !nodes || !types) return;
  int n_types = 0;
  double total = 0;
  for (int i = 0; i < n; i++) {
    nodes[i] = (op_time){g->nodes[i]->name[0] ? g->nodes[i]->name : g->nodes[i]->op_type, t->node_ms[i], i};
    total += t->node_ms[i];
    int k = 0;
    while (k < n_types && strcmp(types[k].op_type, g->nodes[i]->op_type) != 0) k++;
    if (k == n_types) types[n_types++] = (op_time){g->nodes[i]->op_type, 0, 0};
    types[k].ms += t->node_ms[i], types[k].count++;
  }
  qsort(nodes, (size_t)n, sizeof(op_time), by_time);
  qsort(types, (size_t)n_types, sizeof(op_time), by_time);
  if (t->runs > 1)
    fprintf(stderr, "profile: %.3f ms per call (the mean of %d after the first) in %d nodes; the slowest:\n", total,
            t->runs - 1, n);
  else
    fprintf(stderr, "profile: %.3f ms per call (the mean of 1) in %d nodes; the slowest:\n", total, n);
  for (int i = 0; i < n && i < SHOWN && nodes[i].ms > 0; i++)
    fprintf(stderr, "  %9.3f ms %5.1f%%  %s (%s)\n", nodes[i].ms, total > 0 ? 100 * nodes[i].ms / total : 0,
            nodes[i].op_type, g->nodes[nodes[i].count]->op_type);
  fprintf(stderr, "by op type:\n");
  for (int i = 0; i < n_types && types[i].ms > 0; i++)
    fprintf(stderr, "  %9.3f ms %5.1f%%  %s x%d\n", types[i].ms, total > 0 ? 100 * types[i].ms / total : 0,
            types[i].op_type, types[i].count);
}

static void print_timings(const run_args *a, const o2m_run_timings *timings) {
  if (a->timings) print_phase_table(a, timings);
  if (a->repeat)
    fprintf(stderr, "load: %.1f ms, emit: %.1f ms, compile: %.1f ms, run: median %.3f ms over %d (min %.3f ms)"
            "; compile = MLIR passes %.1f ms + LLVM %.1f ms + other %.1f ms; %d matrix product%s through BLAS"
            "; %zu KiB of weights copied to align them\n",
            a->load_ms, timings->emit_ms, timings->compile_ms, timings->run_median_ms, timings->runs,
            timings->run_min_ms, timings->passes_ms, timings->llvm_ms,
            timings->compile_ms - timings->passes_ms - timings->llvm_ms, timings->blas_calls,
            timings->blas_calls == 1 ? "" : "s", (timings->copied_weight_bytes + 1023) / 1024);
}

/* A model with sequence or optional inputs or outputs (run_values.c). */
static int run_with_values(const run_args *a, const struct o2m_plugin *plugin, o2m_model *model, o2m_arena *arena,
                           o2m_diag *diag) {
  o2m_io_value *inputs;
  int rc = cli_read_input_values(model, a->inputs_dir, a->named, a->n_named, arena, &inputs, diag);
  if (rc) return rc;
  int n_out = model->graph->n_outputs;
  o2m_io_value *outputs = o2m_arena_array(arena, (size_t)n_out + 1, sizeof(o2m_io_value));
  o2m_tensor **tensors = o2m_arena_array(arena, (size_t)n_out + 1, sizeof(o2m_tensor *));
  if (!outputs || !tensors) return out_of_memory(diag);
  o2m_run_timings timings = {0};
  o2m_run_options options = {(o2m_target)o2m_target_from_name(a->target), a->opt_level, NULL, NULL, a->repeat,
                             &timings, inputs, outputs, cache_dir(a, arena), a->profile, .threads = a->threads};
  o2m_run_phase phase;
  if (plugin->run_model(model, &options, o2m_runtime_input_count(model), NULL, tensors, arena, &phase, diag))
    return cli_report(diag);
  print_timings(a, &timings);
  return cli_write_output_values(model, outputs, a->out_dir, a->npy, arena, diag);
}

/* As the calls start: what compiling freed goes back to the kernel, so
 * that the calls' buffers (kept from then on, keep_freed_memory) do not
 * stack on top of it. */
static void on_phase(void *user, o2m_run_phase phase) {
  (void)user;
  if (phase == O2M_PHASE_RUN) malloc_trim(0);
}

static int run_loaded(const run_args *a, const struct o2m_plugin *plugin, o2m_model *model, o2m_arena *arena,
                      o2m_diag *diag) {
  if (model && cli_model_has_values(model)) return run_with_values(a, plugin, model, arena, diag);
  enum { MAX_INPUTS = 4096 };
  int n = model ? o2m_runtime_input_count(model) : 0;
  if (n > MAX_INPUTS) return cli_usage_error("run", "models with over %d inputs are not supported", MAX_INPUTS);
  o2m_tensor **inputs = o2m_arena_array(arena, MAX_INPUTS, sizeof(o2m_tensor *));
  if (!inputs) return out_of_memory(diag);
  int rc = read_inputs(a, model, arena, inputs, &n, MAX_INPUTS, diag);
  if (rc) return rc;
  o2m_run_timings timings = {0};
  o2m_run_options options = {(o2m_target)o2m_target_from_name(a->target), a->opt_level, on_phase, NULL, a->repeat,
                             &timings, NULL, NULL, cache_dir(a, arena), a->profile, .threads = a->threads};
  o2m_run_phase phase;
  int n_out = model ? model->graph->n_outputs : 0;
  o2m_tensor **outputs = model ? o2m_arena_array(arena, (size_t)n_out + 1, sizeof(o2m_tensor *)) : NULL;
  if (model && !outputs) return out_of_memory(diag);
  const o2m_tensor *const *in = (const o2m_tensor *const *)inputs;
  o2m_status s = model ? plugin->run_model(model, &options, n, in, outputs, arena, &phase, diag)
                       : plugin->run_mlir_file(a->model, NULL, &options, n, in, &n_out, &outputs, arena, &phase,
                                               diag);
  if (s) return cli_report(diag);
  print_timings(a, &timings);
  if (a->profile && model) print_profile(model, &timings, arena);
  return write_outputs(a, n_out, outputs, arena, diag);
}

int cmd_run(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(run_help, stdout);
      return EXIT_OK;
    }
  run_args a = {.target = "linalg", .opt_level = 2, .named = calloc((size_t)argc, sizeof(char *))};
  if (!a.named) return EXIT_MODEL;
  int rc = parse_args(argc, argv, &a);
  int target = rc ? -1 : o2m_target_from_name(a.target);
  if (!rc && target != O2M_TARGET_LINALG && target != O2M_TARGET_TOSA && target != O2M_TARGET_STABLEHLO)
    rc = cli_usage_error("run", "unknown target '%s' (linalg, tosa, stablehlo)", a.target);
  if (!rc && target == O2M_TARGET_STABLEHLO) {
    fprintf(stderr, "onnx2mlir: error: run --target %s: StableHLO runs in StableHLO's own interpreter, "
                    "which MLIR does not include: write it with `import --to stablehlo` and run it with "
                    "stablehlo-translate --interpret (tests/conformance/check_stablehlo.sh does so for "
                    "the test suites)\n", a.target);
    rc = EXIT_MODEL;
  }
  o2m_diag diag = cli_diag();
  const struct o2m_plugin *plugin = rc ? NULL : cli_load_plugin(&diag);
  if (!rc && !plugin) rc = cli_report(&diag);
  o2m_model *model = NULL;
  int is_mlir = ends_with(a.model ? a.model : "", ".mlir") || ends_with(a.model ? a.model : "", ".mlirbc");
  o2m_load_options lo = {a.data_dir, 0};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!rc && !is_mlir && o2m_model_load(a.model, &lo, &model, &diag)) rc = cli_report(&diag);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  a.load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  o2m_arena arena = {0};
  if (!rc) rc = run_loaded(&a, plugin, model, &arena, &diag);
  o2m_arena_free(&arena);
  o2m_model_free(model);
  free(a.named);
  return rc;
}
