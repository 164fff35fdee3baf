/* strmap.c - open addressing with linear probing, FNV-1a hashing. */
#include "util/strmap.h"

#include <stdint.h>
#include <string.h>

static uint64_t hash_key(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static o2m_strmap_slot *find_slot(o2m_strmap_slot *slots, size_t cap,
                                  const char *key) {
  size_t i = (size_t)hash_key(key) & (cap - 1);
  while (slots[i].key && strcmp(slots[i].key, key) != 0) i = (i + 1) & (cap - 1);
  return &slots[i];
}

void *o2m_strmap_get(const o2m_strmap *map, const char *key) {
  if (!map->cap) return NULL;
  o2m_strmap_slot *s = find_slot(map->slots, map->cap, key);
  return s->key ? s->value : NULL;
}

int o2m_strmap_put(o2m_strmap *map, o2m_arena *arena, const char *key,
                   void *value) {
  if ((map->count + 1) * 4 >= map->cap * 3) {
    size_t cap = map->cap ? map->cap * 2 : 16;
    o2m_strmap_slot *slots = o2m_arena_array(arena, cap, sizeof(*slots));
    if (!slots) return -1;
    for (size_t i = 0; i < map->cap; i++)
      if (map->slots[i].key) *find_slot(slots, cap, map->slots[i].key) = map->slots[i];
    map->slots = slots;
    map->cap = cap;
  }
  o2m_strmap_slot *s = find_slot(map->slots, map->cap, key);
  if (!s->key) {
    s->key = key;
    map->count++;
  }
  s->value = value;
  return 0;
}
