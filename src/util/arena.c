/* arena.c - bump allocator behind arena.h. Large requests get a block of
 * their own so that a big allocation never wastes the tail of a block. */
#include "util/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA_BLOCK_BYTES = 64 * 1024, ARENA_ALIGN = 16 };

struct o2m_arena_block {
  o2m_arena_block *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

static o2m_arena_block *new_block(size_t size) {
  o2m_arena_block *b = calloc(1, sizeof(*b) + size);
  if (!b) return NULL;
  b->size = size;
  return b;
}

void *o2m_arena_alloc(o2m_arena *arena, size_t size) {
  if (size == 0) size = 1;
  if (size > SIZE_MAX / 2) return NULL;
  size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  o2m_arena_block *b = arena->head;
  if (!b || b->size - b->used < size) {
    if (size > ARENA_BLOCK_BYTES / 4) {
      /* a private block, linked behind the head so the head keeps filling */
      o2m_arena_block *big = new_block(size);
      if (!big) return NULL;
      big->used = size;
      if (b) {
        big->next = b->next;
        b->next = big;
      } else {
        arena->head = big;
      }
      arena->used_bytes += size;
      return big->data;
    }
    b = new_block(ARENA_BLOCK_BYTES);
    if (!b) return NULL;
    b->next = arena->head;
    arena->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  arena->used_bytes += size;
  return p;
}

void *o2m_arena_array(o2m_arena *arena, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  return o2m_arena_alloc(arena, count * size);
}

char *o2m_arena_strndup(o2m_arena *arena, const char *src, size_t len) {
  char *s = o2m_arena_alloc(arena, len + 1);
  if (s && len) memcpy(s, src, len);
  return s;
}

char *o2m_arena_strdup(o2m_arena *arena, const char *src) {
  return o2m_arena_strndup(arena, src, strlen(src));
}

char *o2m_arena_printf(o2m_arena *arena, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = o2m_arena_alloc(arena, (size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

void *o2m_arena_grow(o2m_arena *arena, void *old, size_t old_count,
                     size_t new_count, size_t elem_size) {
  void *p = o2m_arena_array(arena, new_count, elem_size);
  if (p && old && old_count) memcpy(p, old, old_count * elem_size);
  return p;
}

void o2m_arena_free(o2m_arena *arena) {
  o2m_arena_block *b = arena->head;
  while (b) {
    o2m_arena_block *next = b->next;
    free(b);
    b = next;
  }
  arena->head = NULL;
  arena->used_bytes = 0;
}
