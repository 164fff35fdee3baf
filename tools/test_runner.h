/* test_runner.h - what `onnx2mlir test` runs per test: one ONNX
 * backend-test folder (model.onnx + test_data_set_*), in a forked child
 * process with a timeout, so that a crash or a hang is that test's
 * failure and never the whole run's. */
#ifndef O2M_TEST_RUNNER_H
#define O2M_TEST_RUNNER_H

#include "exec/run.h"
#include "onnx2mlir.h"

struct o2m_plugin;

typedef enum test_status { TEST_PASS, TEST_FAIL, TEST_SKIP } test_status;

typedef struct test_case {
  char *name; /* the folder's name */
  char *dir;  /* the folder */
  /* filled when the test has run */
  int finished;
  test_status status;
  char klass[16];    /* reason class of a failure: "read", "infer", ... */
  char *message;     /* why it failed or was skipped; NULL on success */
  double seconds;
} test_case;

typedef struct test_config {
  const struct o2m_plugin *plugin; /* loaded before any fork */
  o2m_target target;
  int jobs;       /* tests run in parallel */
  double timeout; /* seconds per test */
  int opt_level;
} test_config;

/* Runs every test, `jobs` at a time; calls done(user, i) as test i ends
 * (in any order). Returns non-zero when processes cannot be started. */
int run_tests(test_case *tests, int n, const test_config *config,
              void (*done)(void *user, int index), void *user);

/* The reason class of a failure in `phase` with `status` ("read", "infer",
 * "unsupported", "emit", "verify", "compile", "run", "mismatch"). */
const char *test_class_of(o2m_run_phase phase, o2m_status status);

/* Inside the forked child (test_child.c): runs `test` and reports on `fd`
 * (protocol described there); never returns. */
void test_child_main(const test_case *test, const test_config *config, int fd)
    __attribute__((noreturn));

#endif
