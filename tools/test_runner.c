/* test_runner.c - the process pool of `onnx2mlir test`: forks one child
 * per test (test_child.c does the work), at most `jobs` at a time, reads
 * each child's records from a pipe, kills a child that outlives the
 * timeout, and turns a child that dies without a result (signal, abort,
 * exit) into a failure of the phase it was in. With several jobs each
 * child's kernels run on one thread (ONNX2MLIR_THREADS=1 unless set).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_runner.h"

typedef struct slot {
  int test; /* -1 when free */
  pid_t pid;
  int fd;
  double start;
  o2m_run_phase phase;
  int have_result;
  char line[2600];
  size_t line_len;
  char stray[320]; /* the end of the child's other output */
  size_t stray_len;
} slot;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void keep_stray(slot *s, const char *text, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s->stray_len == sizeof(s->stray) - 1) {
      memmove(s->stray, s->stray + 1, s->stray_len - 1);
      s->stray_len--;
    }
    s->stray[s->stray_len++] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    s->stray[s->stray_len] = '\0';
  }
}

/* One complete line from the child: a record, or stray output. */
static void take_line(slot *s, test_case *t) {
  char *l = s->line;
  if (s->line_len >= 3 && l[0] == 0x1e && l[1] == 'P') {
    s->phase = (o2m_run_phase)(l[2] - '0');
  } else if (s->line_len >= 3 && l[0] == 0x1e && l[1] == 'R' && !s->have_result) {
    char *klass = strchr(l, 0x1f), *message = klass ? strchr(klass + 1, 0x1f) : NULL;
    if (!message) return;
    *message++ = '\0';
    t->status = (test_status)(l[2] - '0');
    snprintf(t->klass, sizeof(t->klass), "%s", klass + 1);
    t->message = message[0] ? strdup(message) : NULL;
    s->have_result = 1;
  } else {
    keep_stray(s, l, s->line_len);
    keep_stray(s, "\n", 1);
  }
}

static void take_output(slot *s, test_case *t, const char *buf, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (buf[i] == '\n' || s->line_len == sizeof(s->line) - 1) {
      s->line[s->line_len] = '\0';
      take_line(s, t);
      s->line_len = 0;
      if (buf[i] == '\n') continue;
    }
    s->line[s->line_len++] = buf[i];
  }
}

static char *printf_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *printf_dup(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return strdup(buf);
}

/* The child is gone (`wait_status` from waitpid, or timed out). */
static void settle(slot *s, test_case *t, int wait_status, int timed_out, double timeout) {
  if (s->line_len) {
    s->line[s->line_len] = '\0';
    take_line(s, t);
  }
  t->seconds = now() - s->start;
  t->finished = 1;
  if (s->have_result && !timed_out) return;
  const char *phase = test_class_of(s->phase, O2M_OK);
  t->status = TEST_FAIL;
  snprintf(t->klass, sizeof(t->klass), "%s", phase);
  free(t->message);
  const char *sep = s->stray_len ? "; output: " : "";
  if (timed_out)
    t->message = printf_dup("timed out after %g s (in phase %s)%s%s", timeout, phase, sep, s->stray);
  else if (WIFSIGNALED(wait_status))
    t->message = printf_dup("crashed with signal %d (%s) in phase %s%s%s", WTERMSIG(wait_status),
                            strsignal(WTERMSIG(wait_status)), phase, sep, s->stray);
  else
    t->message = printf_dup("exited with status %d without a result in phase %s%s%s",
                            WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1, phase, sep, s->stray);
}

static int start(slot *s, test_case *tests, int index, const test_config *config, slot *slots) {
  int fds[2];
  fflush(NULL); /* a child must not inherit unwritten output */
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    for (int k = 0; k < config->jobs; k++)
      if (slots[k].test >= 0) close(slots[k].fd);
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    test_child_main(&tests[index], config, fds[1]);
  }
  close(fds[1]);
  *s = (slot){.test = index, .pid = pid, .fd = fds[0], .start = now(), .phase = O2M_PHASE_READ};
  return 0;
}

int run_tests(test_case *tests, int n, const test_config *config, void (*done)(void *user, int index),
              void *user) {
  /* the tests run side by side, one per core: each child's kernels on one
   * thread (unless the user chose), so that threads do not multiply */
  if (config->jobs > 1) setenv("ONNX2MLIR_THREADS", "1", 0);
  slot *slots = calloc((size_t)config->jobs, sizeof(slot));
  struct pollfd *fds = calloc((size_t)config->jobs, sizeof(struct pollfd));
  int *owner = calloc((size_t)config->jobs, sizeof(int));
  if (!slots || !fds || !owner) {
    free(slots), free(fds), free(owner);
    return -1;
  }
  for (int k = 0; k < config->jobs; k++) slots[k].test = -1;
  int next = 0, running = 0, rc = 0;
  while ((next < n && rc == 0) || running) {
    for (int k = 0; k < config->jobs && next < n && rc == 0; k++)
      if (slots[k].test < 0) {
        if (start(&slots[k], tests, next, config, slots) != 0) {
          rc = -1;
          break;
        }
        next++, running++;
      }
    int m = 0;
    double wait_s = 1.0;
    for (int k = 0; k < config->jobs; k++) {
      if (slots[k].test < 0) continue;
      fds[m] = (struct pollfd){.fd = slots[k].fd, .events = POLLIN};
      owner[m++] = k;
      double left = slots[k].start + config->timeout - now();
      if (left < wait_s) wait_s = left > 0 ? left : 0;
    }
    if (m && poll(fds, (nfds_t)m, (int)(wait_s * 1000) + 1) < 0 && errno != EINTR) rc = -1;
    for (int j = 0; j < m; j++) {
      slot *s = &slots[owner[j]];
      test_case *t = &tests[s->test];
      int gone = 0, timed_out = 0, status = 0;
      if (fds[j].revents) {
        char buf[4096];
        ssize_t got = read(s->fd, buf, sizeof(buf));
        if (got > 0) take_output(s, t, buf, (size_t)got);
        gone = got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN);
      }
      if (!gone && now() - s->start > config->timeout) {
        kill(s->pid, SIGKILL);
        gone = timed_out = 1;
      }
      if (!gone) continue;
      waitpid(s->pid, &status, 0);
      close(s->fd);
      settle(s, t, status, timed_out, config->timeout);
      int index = s->test;
      s->test = -1;
      running--;
      done(user, index);
    }
  }
  free(slots), free(fds), free(owner);
  return rc;
}
