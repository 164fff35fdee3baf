/* form_values.c - the map from graph values to the SSA values defining them.
 *
 * Owns: a pointer-keyed hash table (open addressing, linear probing) that
 * an as-written emitter fills as it creates block arguments, constants and
 * node results, and reads for every operand. Keys are the o2m_value
 * pointers themselves, unique across the whole model, so one map serves
 * the main graph and every subgraph; a subgraph's reference to an outer
 * value resolves to the outer value's definition.
 */
#include <stdint.h>
#include <stdlib.h>

#include "emit/form/form.h"

static size_t hash_pointer(const void *p, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static form_value_slot *find_slot(form_value_slot *slots, size_t cap,
                                   const o2m_value *key) {
  size_t i = hash_pointer(key, cap);
  while (slots[i].key && slots[i].key != key) i = (i + 1) & (cap - 1);
  return &slots[i];
}

static int resize(form_value_map *map, size_t cap) {
  form_value_slot *slots = calloc(cap, sizeof(*slots));
  if (!slots) return -1;
  for (size_t i = 0; i < map->cap; i++)
    if (map->slots[i].key)
      *find_slot(slots, cap, map->slots[i].key) = map->slots[i];
  free(map->slots);
  map->slots = slots;
  map->cap = cap;
  return 0;
}

int form_values_reserve(form_value_map *map, size_t count) {
  size_t cap = 1024;
  while (cap < count * 2) cap *= 2;
  return cap > map->cap ? resize(map, cap) : 0;
}

int form_values_put(form_value_map *map, const o2m_value *value,
                     MlirValue def) {
  if ((map->count + 1) * 4 >= map->cap * 3 &&
      resize(map, map->cap ? map->cap * 2 : 1024) != 0)
    return -1;
  form_value_slot *slot = find_slot(map->slots, map->cap, value);
  if (!slot->key) {
    slot->key = value;
    map->count++;
  }
  slot->value = def;
  return 0;
}

MlirValue form_values_get(const form_value_map *map, const o2m_value *value) {
  /* An outer reference chain ends at the defining graph's own value. */
  while (value && value->kind == O2M_VALUE_OUTER && value->outer)
    value = value->outer;
  if (!value || !map->cap) return (MlirValue){NULL};
  form_value_slot *slot = find_slot(map->slots, map->cap, value);
  return slot->key ? slot->value : (MlirValue){NULL};
}

void form_values_free(form_value_map *map) {
  free(map->slots);
  map->slots = NULL;
  map->cap = map->count = 0;
}
