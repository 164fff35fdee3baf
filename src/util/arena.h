/* arena.h - bump allocation for one phase of work.
 *
 * Owns: blocks of memory handed out by o2m_arena_alloc and freed all at once
 * by o2m_arena_free. Every decoded model, graph and inferred type of one
 * load lives in one arena. Allocation failure returns NULL; callers turn
 * that into O2M_ERR_NOMEM. Memory is zero-filled.
 */
#ifndef O2M_ARENA_H
#define O2M_ARENA_H

#include <stddef.h>

typedef struct o2m_arena_block o2m_arena_block;

typedef struct o2m_arena {
  o2m_arena_block *head;
  size_t used_bytes; /* total handed out, for statistics */
} o2m_arena;

/* Zeroed memory of `size` bytes aligned to 16; NULL when out of memory. */
void *o2m_arena_alloc(o2m_arena *arena, size_t size);
/* An array of `count` elements of `size` bytes; NULL on overflow or OOM. */
void *o2m_arena_array(o2m_arena *arena, size_t count, size_t size);
/* A NUL-terminated copy of `len` bytes at `src`. */
char *o2m_arena_strndup(o2m_arena *arena, const char *src, size_t len);
char *o2m_arena_strdup(o2m_arena *arena, const char *src);
/* printf into the arena. */
char *o2m_arena_printf(o2m_arena *arena, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Grows an arena array (old contents copied, old block left in the arena). */
void *o2m_arena_grow(o2m_arena *arena, void *old, size_t old_count,
                     size_t new_count, size_t elem_size);
void o2m_arena_free(o2m_arena *arena);

#endif
