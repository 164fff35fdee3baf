/* test_mapfile.c - file mappings (src/onnx/mapfile.c): mapping a file,
 * refusing what is not a regular file, and o2m_mapping_copy, which copies
 * mapped bytes into an output file through the kernel: exact bytes at the
 * output's position, nothing for pointers outside the mappings, nothing
 * when the file at the path was replaced since it was mapped. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "onnx/reader.h"

static char dir[] = "/tmp/o2m_mapfile_XXXXXX";

static char *path_in_dir(const char *name) {
  static char paths[4][256];
  static int next;
  char *p = paths[next++ % 4];
  snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
  return p;
}

static void write_file(const char *path, const uint8_t *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(bytes, 1, n, f) != n) abort();
  fclose(f);
}

static size_t read_file(const char *path, uint8_t *out, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(out, 1, cap, f);
  fclose(f);
  return n;
}

int main(void) {
  if (!mkdtemp(dir)) return 1;
  enum { N = 300000 };
  uint8_t *data = malloc(N), *back = malloc(N + 16);
  if (!data || !back) return 1;
  for (int i = 0; i < N; i++) data[i] = (uint8_t)(i * 7 + i / 251);
  char *src = path_in_dir("src.bin");
  write_file(src, data, N);

  o2m_mapping m = {0};
  o2m_diag diag = {0};
  CHECK(o2m_map_file(src, &m, &diag) == O2M_OK && m.size == N);
  CHECK(memcmp(m.addr, data, N) == 0);

  /* a range in the middle, after a prefix written by stdio */
  char *dst = path_in_dir("dst.bin");
  FILE *out = fopen(dst, "wb");
  CHECK(out != NULL);
  fputs("head", out);
  fflush(out);
  const uint8_t *mid = (const uint8_t *)m.addr + 1000;
  CHECK(o2m_mapping_copy(&m, 1, mid, 200000, fileno(out)) == 200000);
  fputs("tail", out);
  fclose(out);
  size_t n = read_file(dst, back, N + 16);
  CHECK(n == 4 + 200000 + 4 && memcmp(back, "head", 4) == 0 &&
        memcmp(back + 4, data + 1000, 200000) == 0 && memcmp(back + 200004, "tail", 4) == 0);

  /* outside the mapping, or running past its end: nothing copied */
  out = fopen(dst, "wb");
  CHECK(o2m_mapping_copy(&m, 1, data, 100, fileno(out)) == 0);
  CHECK(o2m_mapping_copy(&m, 1, (const uint8_t *)m.addr + N - 10, 20, fileno(out)) == 0);
  fclose(out);

  /* the file at the path replaced since it was mapped: nothing copied */
  char *moved = path_in_dir("moved.bin");
  CHECK(rename(src, moved) == 0);
  write_file(src, data, N);
  out = fopen(dst, "wb");
  CHECK(o2m_mapping_copy(&m, 1, m.addr, 1000, fileno(out)) == 0);
  fclose(out);

  /* a directory is not a regular file */
  o2m_mapping d = {0};
  CHECK(o2m_map_file(dir, &d, &diag) != O2M_OK && strstr(diag.message, "not a regular file"));

  o2m_unmap_file(&m);
  unlink(src);
  unlink(moved);
  unlink(dst);
  rmdir(dir);
  free(data);
  free(back);
  return CHECK_SUMMARY();
}
