/* tensor_file.c - reading and writing single-tensor files (see
 * tensor_file.h). */
#include <stdio.h>
#include <string.h>

#include "onnx/npy.h"
#include "onnx/reader.h"
#include "onnx/tensor_file.h"
#include "onnx/tensor_writer.h"
#include "util/diag.h"

/* Moves every byte `t` views in the mapping into the arena. */
static o2m_status own_payload(o2m_arena *arena, o2m_tensor *t, const char *path, o2m_diag *diag) {
  if (t->external)
    return o2m_fail(diag, O2M_ERR_UNSUPPORTED, "%s: the tensor refers to external data, which input files cannot",
                    path);
  if (t->data && t->nbytes) {
    uint8_t *copy = o2m_arena_alloc(arena, t->nbytes);
    if (!copy) return o2m_fail(diag, O2M_ERR_NOMEM, "%s: out of memory", path);
    memcpy(copy, t->data, t->nbytes);
    t->data = copy;
  }
  for (int64_t i = 0; t->strings && i < t->count; i++) {
    char *copy = o2m_arena_strndup(arena, (const char *)t->strings[i].ptr, t->strings[i].len);
    if (!copy) return o2m_fail(diag, O2M_ERR_NOMEM, "%s: out of memory", path);
    t->strings[i].ptr = (const uint8_t *)copy;
  }
  t->origin = O2M_DATA_DECODED;
  return O2M_OK;
}

o2m_status o2m_read_tensor_file(o2m_arena *arena, const char *path, o2m_tensor **out, o2m_diag *diag) {
  *out = NULL;
  o2m_mapping map;
  o2m_status s = o2m_map_file(path, &map, diag);
  if (s) return s;
  const uint8_t *bytes = map.addr;
  if (o2m_npy_is_npy(bytes, map.size))
    s = o2m_npy_decode(arena, bytes, map.size, path, out, diag);
  else
    s = o2m_decode_tensor(arena, bytes, map.size, path, out, diag);
  if (!s) s = own_payload(arena, *out, path, diag);
  o2m_unmap_file(&map);
  if (s) *out = NULL;
  return s;
}

o2m_status o2m_write_tensor_file(const o2m_tensor *t, const char *path, o2m_tensor_format format,
                                 o2m_diag *diag) {
  FILE *f = fopen(path, "wb");
  if (!f) return o2m_fail(diag, O2M_ERR_IO, "%s: cannot create the file", path);
  o2m_status s = format == O2M_FORMAT_NPY ? o2m_npy_write(t, f, path, diag) : o2m_tensor_write_pb(t, f, path, diag);
  if (fclose(f) != 0 && !s) s = o2m_fail(diag, O2M_ERR_IO, "%s: writing failed", path);
  if (s) remove(path);
  return s;
}
