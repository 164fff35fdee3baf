/* cmd_test.c - `onnx2mlir test DIR...`: finds ONNX backend tests, runs
 * them (test_runner.c), prints one line per test that did not pass and
 * the summary line, writes the JSON report and the pass lists, and turns
 * the outcome into the exit status (optionally against a ratchet list). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "plugin/plugin.h"
#include "test_runner.h"

static const char test_help[] =
    "usage: onnx2mlir test DIR... [--target T] [-j N] [--timeout S] [--json FILE]\n"
    "                             [--pass-list FILE] [--write-pass-list FILE] [-O LEVEL] [-v]\n\n"
    "Runs ONNX backend tests: a DIR holding model.onnx is one test, any other DIR\n"
    "holds one test per subfolder with a model.onnx. Every test_data_set_*/ of a\n"
    "test is run (input_<i>.pb) and compared with its output_<i>.pb (rtol 1e-3,\n"
    "atol 1e-7, NaN equals NaN, shapes and dtypes exact). Each test runs in its own\n"
    "process, so a crash or a hang fails only that test.\n\n"
    "Prints 'FAIL <test> <class>: <message>' per failing test, with the class one\n"
    "of read, infer, unsupported, emit, verify, compile, run, mismatch, and\n"
    "'SKIP <test>: <reason>' for tests that cannot apply, then\n"
    "'N passed, N failed, N skipped'. Exit status 0 when every test run passed.\n\n"
    "  --target T             linalg (default), tosa (stablehlo is refused: it runs in\n"
    "                         StableHLO's interpreter, see check_stablehlo.sh)\n"
    "  -j N                   run N tests in parallel (default 1)\n"
    "  --timeout S            seconds per test before it is killed (default 120)\n"
    "  --json FILE            write a report: per test name, status, class,\n"
    "                         message, seconds\n"
    "  --pass-list FILE       ratchet: exit 1 only when a test named in FILE (one\n"
    "                         name per line, # comments) fails; those are printed\n"
    "                         as 'REGRESSION <test>'\n"
    "  --write-pass-list FILE write the names of the passing tests\n"
    "  -O LEVEL               LLVM optimisation level 0..3 (default 2)\n"
    "  -v                     also print 'PASS <test> (seconds)'\n";

typedef struct test_args {
  const char *target, *json, *pass_list, *write_pass_list;
  int jobs, opt_level, verbose;
  double timeout;
  int n_dirs;
  char **dirs;
} test_args;

typedef struct suite {
  test_case *tests;
  int n, cap;
  int printed; /* tests [0, printed) have been reported */
  int verbose;
} suite;

/* ---- arguments ------------------------------------------------------------- */

static int parse_number(const char *v, double lo, double hi, double *out) {
  char *end;
  double d = v ? strtod(v, &end) : 0;
  if (!v || end == v || *end || d < lo || d > hi) return 0;
  *out = d;
  return 1;
}

/* A short option with its value attached: "-j4". */
static int attached(const char *arg, const char *name, const char **value) {
  if (strncmp(arg, name, 2) != 0 || !arg[2]) return 0;
  *value = arg + 2;
  return 1;
}

static int parse_args(int argc, char **argv, test_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    double d;
    if (cli_flag_value(argc, argv, &i, "--target", &a->target)) {
      if (!a->target) return cli_usage_error("test", "--target needs a target");
    } else if (cli_flag_value(argc, argv, &i, "-j", &v) || attached(argv[i], "-j", &v)) {
      if (!parse_number(v, 1, 256, &d) || d != (int)d) return cli_usage_error("test", "-j takes 1..256");
      a->jobs = (int)d;
    } else if (cli_flag_value(argc, argv, &i, "--timeout", &v)) {
      if (!parse_number(v, 0.001, 86400, &a->timeout)) return cli_usage_error("test", "--timeout takes seconds");
    } else if (cli_flag_value(argc, argv, &i, "-O", &v) || attached(argv[i], "-O", &v)) {
      if (!parse_number(v, 0, 3, &d) || d != (int)d) return cli_usage_error("test", "-O takes 0, 1, 2 or 3");
      a->opt_level = (int)d;
    } else if (cli_flag_value(argc, argv, &i, "--json", &a->json)) {
      if (!a->json) return cli_usage_error("test", "--json needs a file");
    } else if (cli_flag_value(argc, argv, &i, "--pass-list", &a->pass_list)) {
      if (!a->pass_list) return cli_usage_error("test", "--pass-list needs a file");
    } else if (cli_flag_value(argc, argv, &i, "--write-pass-list", &a->write_pass_list)) {
      if (!a->write_pass_list) return cli_usage_error("test", "--write-pass-list needs a file");
    } else if (strcmp(argv[i], "-v") == 0) {
      a->verbose = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("test", "unknown option '%s'", argv[i]);
    } else {
      a->dirs[a->n_dirs++] = argv[i];
    }
  }
  if (!a->n_dirs) return cli_usage_error("test", "no test folder given");
  return EXIT_OK;
}

/* ---- finding tests ------------------------------------------------------------ */

static int has_model(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/model.onnx", dir) >= (int)sizeof(path)) return 0;
  return access(path, R_OK) == 0;
}

static int add_test(suite *s, const char *dir, const char *name) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 256;
    test_case *grown = realloc(s->tests, (size_t)cap * sizeof(test_case));
    if (!grown) return -1;
    s->tests = grown;
    s->cap = cap;
  }
  test_case *t = &s->tests[s->n];
  *t = (test_case){.name = strdup(name), .dir = strdup(dir)};
  if (!t->name || !t->dir) return -1;
  s->n++;
  return 0;
}

static int only_dirs(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Adds DIR itself, or each subfolder holding a model, in name order. */
static int find_tests(suite *s, const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return cli_usage_error("test", "'%s' is not a folder", dir);
  if (has_model(dir)) {
    char *copy = strdup(dir);
    size_t len = copy ? strlen(copy) : 0;
    while (len > 1 && copy[len - 1] == '/') copy[--len] = '\0';
    const char *base = copy ? strrchr(copy, '/') : NULL;
    int rc = copy ? add_test(s, dir, base ? base + 1 : copy) : -1;
    free(copy);
    return rc ? EXIT_MODEL : EXIT_OK;
  }
  struct dirent **entries;
  int n = scandir(dir, &entries, only_dirs, alphasort);
  if (n < 0) return cli_usage_error("test", "cannot list '%s'", dir);
  int rc = EXIT_OK;
  for (int i = 0; i < n; i++) {
    char path[4096];
    int len = snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name);
    if (rc == EXIT_OK && len < (int)sizeof(path) && has_model(path) && add_test(s, path, entries[i]->d_name)) rc = EXIT_MODEL;
    free(entries[i]);
  }
  free(entries);
  return rc;
}

/* ---- reporting ------------------------------------------------------------------ */

/* Prints the results of finished tests in test order. */
static void report_done(void *user, int index) {
  suite *s = user;
  (void)index;
  for (; s->printed < s->n && s->tests[s->printed].finished; s->printed++) {
    const test_case *t = &s->tests[s->printed];
    if (t->status == TEST_FAIL)
      printf("FAIL %s %s: %s\n", t->name, t->klass, t->message ? t->message : "");
    else if (t->status == TEST_SKIP)
      printf("SKIP %s: %s\n", t->name, t->message ? t->message : "");
    else if (s->verbose)
      printf("PASS %s (%.2f s)\n", t->name, t->seconds);
  }
  fflush(stdout);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static int write_json(const char *path, const suite *s, const char *target) {
  static const char *const status_names[] = {"pass", "fail", "skip"};
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\"target\": ");
  json_string(f, target);
  fprintf(f, ", \"tests\": [");
  for (int i = 0; i < s->n; i++) {
    const test_case *t = &s->tests[i];
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_string(f, t->name);
    fprintf(f, ", \"status\": \"%s\", \"class\": ", status_names[t->status]);
    json_string(f, t->klass);
    fprintf(f, ", \"message\": ");
    json_string(f, t->message);
    fprintf(f, ", \"seconds\": %.3f}", t->seconds);
  }
  fprintf(f, "\n]}\n");
  return fclose(f);
}

static int write_pass_list(const char *path, const suite *s) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  for (int i = 0; i < s->n; i++)
    if (s->tests[i].status == TEST_PASS) fprintf(f, "%s\n", s->tests[i].name);
  return fclose(f);
}

/* Prints REGRESSION lines for listed tests that failed; returns how many,
 * or -1 when the list cannot be read. */
static int check_pass_list(const char *path, const suite *s) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int regressions = 0;
  for (char line[1024]; fgets(line, sizeof(line), f);) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    for (int i = 0; i < s->n; i++)
      if (s->tests[i].status == TEST_FAIL && strcmp(s->tests[i].name, line) == 0) {
        printf("REGRESSION %s\n", line);
        regressions++;
      }
  }
  fclose(f);
  return regressions;
}

/* ---- the command ------------------------------------------------------------------ */

static int finish(const test_args *a, suite *s) {
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < s->n; i++) counts[s->tests[i].status]++;
  int rc = counts[TEST_FAIL] ? EXIT_MODEL : EXIT_OK;
  if (a->pass_list) {
    int regressions = check_pass_list(a->pass_list, s);
    if (regressions < 0) fprintf(stderr, "onnx2mlir: error: cannot read the pass list '%s'\n", a->pass_list);
    rc = regressions ? EXIT_MODEL : EXIT_OK;
  }
  if (a->json && write_json(a->json, s, a->target) != 0) {
    fprintf(stderr, "onnx2mlir: error: cannot write '%s'\n", a->json);
    rc = EXIT_MODEL;
  }
  if (a->write_pass_list && write_pass_list(a->write_pass_list, s) != 0) {
    fprintf(stderr, "onnx2mlir: error: cannot write '%s'\n", a->write_pass_list);
    rc = EXIT_MODEL;
  }
  printf("%d passed, %d failed, %d skipped\n", counts[TEST_PASS], counts[TEST_FAIL], counts[TEST_SKIP]);
  return rc;
}

int cmd_test(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(test_help, stdout);
      return EXIT_OK;
    }
  test_args a = {.target = "linalg", .jobs = 1, .opt_level = 2, .timeout = 120,
                 .dirs = calloc((size_t)argc, sizeof(char *))};
  suite s = {.tests = NULL};
  int rc = a.dirs ? parse_args(argc, argv, &a) : EXIT_MODEL;
  int target = rc ? -1 : o2m_target_from_name(a.target);
  if (!rc && target != O2M_TARGET_LINALG && target != O2M_TARGET_TOSA && target != O2M_TARGET_STABLEHLO)
    rc = cli_usage_error("test", "unknown target '%s' (linalg, tosa, stablehlo)", a.target);
  if (!rc && target == O2M_TARGET_STABLEHLO) {
    fprintf(stderr, "onnx2mlir: error: test --target %s: StableHLO runs in StableHLO's own interpreter, "
                    "which MLIR does not include: write it with `import --to stablehlo` and run it with "
                    "stablehlo-translate --interpret (tests/conformance/check_stablehlo.sh does so for "
                    "the test suites)\n", a.target);
    rc = EXIT_MODEL;
  }
  for (int i = 0; !rc && i < a.n_dirs; i++) rc = find_tests(&s, a.dirs[i]);
  if (!rc && !s.n) rc = cli_usage_error("test", "no test (a folder holding model.onnx) in the folders given");
  o2m_diag diag = cli_diag();
  const struct o2m_plugin *plugin = rc ? NULL : cli_load_plugin(&diag);
  if (!rc && !plugin) rc = cli_report(&diag);
  s.verbose = a.verbose;
  test_config config = {plugin, (o2m_target)target, a.jobs, a.timeout, a.opt_level};
  if (!rc && run_tests(s.tests, s.n, &config, report_done, &s) != 0) {
    fprintf(stderr, "onnx2mlir: error: cannot start test processes\n");
    rc = EXIT_MODEL;
  }
  if (!rc) rc = finish(&a, &s);
  for (int i = 0; i < s.n; i++) free(s.tests[i].name), free(s.tests[i].dir), free(s.tests[i].message);
  free(s.tests);
  free(a.dirs);
  return rc;
}
