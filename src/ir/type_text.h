/* type_text.h - ONNX types as short human-readable text for `info` and
 * messages: float32[batch,3,224,224], seq<int64[?]>, optional<...>. */
#ifndef O2M_TYPE_TEXT_H
#define O2M_TYPE_TEXT_H

#include <stddef.h>

#include "ir/ir.h"

/* Writes the text of `t` into buf (always NUL-terminated); returns buf. */
char *o2m_type_text(const o2m_type *t, char *buf, size_t cap);

#endif
