/* diag.c - error and warning reporting behind diag.h. */
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const status_names[] = {
    [O2M_OK] = "ok",
    [O2M_ERR_IO] = "I/O error",
    [O2M_ERR_PARSE] = "parse error",
    [O2M_ERR_INVALID] = "invalid model",
    [O2M_ERR_UNSUPPORTED] = "unsupported",
    [O2M_ERR_USAGE] = "bad usage",
    [O2M_ERR_NOMEM] = "out of memory",
    [O2M_ERR_INTERNAL] = "internal error",
};

const char *o2m_status_name(o2m_status status) {
  if ((unsigned)status < sizeof(status_names) / sizeof(status_names[0]))
    return status_names[status];
  return "unknown status";
}

o2m_status o2m_fail(o2m_diag *diag, o2m_status status, const char *fmt, ...) {
  if (diag && diag->status == O2M_OK) {
    diag->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
    va_end(ap);
  }
  return status;
}

void o2m_warn(o2m_diag *diag, const char *fmt, ...) {
  if (!diag || !diag->warn) return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  diag->warn(diag->warn_user, buf);
}
