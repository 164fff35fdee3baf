/* exec_text.c - text grown in memory, for what the exec layer prints of
 * MLIR (a function's code to compare, a module's text to parse).
 *
 * Owns: exec_text (appended to, NUL-terminated, a failed flag instead of
 * an error at each append), the MLIR print callback that fills one, a
 * function's code without its name, and the hash the comparisons use.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/exec_internal.h"

void exec_text_put(exec_text *t, const char *s, size_t n) {
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 4096;
    while (cap < t->len + n + 1) cap *= 2;
    char *grown = realloc(t->s, cap);
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->s = grown, t->cap = cap;
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

void exec_text_append(MlirStringRef s, void *user) { exec_text_put(user, s.data, s.length); }

int exec_function_code(MlirOperation fn, MlirOpPrintingFlags flags, exec_text *t) {
  mlirOperationPrintWithFlags(fn, flags, exec_text_append, t);
  if (t->failed) return -1;
  char *open = memchr(t->s, '(', t->len);
  if (!open) return -1;
  size_t skip = (size_t)(open - t->s);
  memmove(t->s, open, t->len - skip + 1);
  t->len -= skip;
  return 0;
}

uint64_t exec_hash_bytes(const char *p, size_t n) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001B3ull;
  return h;
}
