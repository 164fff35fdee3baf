/* diag.h - filling an o2m_diag from inside the library.
 *
 * Owns: formatting of error and warning messages. Nothing here prints; a
 * warning goes to the diag's callback, an error into diag->message.
 */
#ifndef O2M_DIAG_H
#define O2M_DIAG_H

#include "onnx2mlir.h"

/* Records the error (only the first one sticks) and returns `status`. */
o2m_status o2m_fail(o2m_diag *diag, o2m_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends a warning to the diag's callback, if any. */
void o2m_warn(o2m_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
