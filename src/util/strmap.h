/* strmap.h - a string-keyed hash map whose storage lives in an arena.
 *
 * Owns: lookup of pointers by NUL-terminated name (value names, symbols).
 * Keys are borrowed, not copied: they must outlive the map (arena strings
 * do). Zero-initialise before use; there is no free, the arena frees it.
 */
#ifndef O2M_STRMAP_H
#define O2M_STRMAP_H

#include <stddef.h>

#include "util/arena.h"

typedef struct o2m_strmap_slot {
  const char *key;
  void *value;
} o2m_strmap_slot;

typedef struct o2m_strmap {
  o2m_strmap_slot *slots;
  size_t cap, count;
} o2m_strmap;

/* NULL when absent. */
void *o2m_strmap_get(const o2m_strmap *map, const char *key);
/* Inserts or replaces; returns 0, or -1 when out of memory. */
int o2m_strmap_put(o2m_strmap *map, o2m_arena *arena, const char *key,
                   void *value);

#endif
