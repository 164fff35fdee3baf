/* exec_cache_prune.c - the cache's size limit: after an entry is stored,
 * the least recently used entries go until the entries together hold at
 * most the limit (ONNX2MLIR_CACHE_LIMIT_MB, default 2048 MiB; 0: no
 * limit). An entry's last use is its entry.txt's modification time, which
 * a load renews (exec_cache_touch). Only folders named as entries are
 * (16 hex digits) are looked at, and only their files removed. Also the
 * folders a writer left behind (an entry's name, then ".tmp." or ".old.":
 * exec_cache.c's temporary and set-aside folders) once they are an hour
 * old: a writer that was killed never renames or removes its own, and a
 * live one is done with its in seconds.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec_internal.h"

typedef struct entry {
  char name[17];
  uint64_t bytes;
  struct timespec used;
} entry;

static int is_entry_name(const char *s) {
  if (strlen(s) != 16) return 0;
  for (int i = 0; i < 16; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

/* The bytes of the entry's files and when it was last used; -1 when it is
 * no folder. */
static int measure(const char *dir, entry *e) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, e->name);
  DIR *d = opendir(path);
  if (!d) return -1;
  e->bytes = 0;
  e->used = (struct timespec){0, 0};
  for (struct dirent *f; (f = readdir(d)) != NULL;) {
    struct stat st;
    char file[4500];
    snprintf(file, sizeof(file), "%s/%s", path, f->d_name);
    if (f->d_name[0] == '.' || stat(file, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    e->bytes += (uint64_t)st.st_size;
    if (strcmp(f->d_name, "entry.txt") == 0) e->used = st.st_mtim;
  }
  closedir(d);
  return 0;
}

static void remove_entry(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  DIR *d = opendir(path);
  if (!d) return;
  for (struct dirent *f; (f = readdir(d)) != NULL;) {
    char file[4500];
    if (f->d_name[0] == '.') continue;
    snprintf(file, sizeof(file), "%s/%s", path, f->d_name);
    remove(file);
  }
  closedir(d);
  rmdir(path);
}

enum { STALE_SECONDS = 3600 };

/* A writer's temporary or set-aside folder (exec_cache.c's names). */
static int is_leftover_name(const char *s) {
  char head[17];
  if (strlen(s) < 21) return 0;
  memcpy(head, s, 16);
  head[16] = 0;
  return is_entry_name(head) && (strncmp(s + 16, ".tmp.", 5) == 0 || strncmp(s + 16, ".old.", 5) == 0);
}

static void remove_stale_leftover(const char *dir, const char *name) {
  char path[4200];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && time(NULL) - st.st_mtim.tv_sec > STALE_SECONDS)
    remove_entry(dir, name);
}

static int older(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  return x->used.tv_nsec < y->used.tv_nsec ? -1 : x->used.tv_nsec > y->used.tv_nsec;
}

uint64_t exec_cache_limit(void) {
  const char *mb = getenv("ONNX2MLIR_CACHE_LIMIT_MB");
  if (!mb || !*mb) return (uint64_t)2048 << 20;
  long long v = strtoll(mb, NULL, 10);
  return v <= 0 ? 0 : (uint64_t)v << 20;
}

void exec_cache_prune(const char *dir, const char *keep, uint64_t limit) {
  if (!limit) return;
  DIR *d = opendir(dir);
  if (!d) return;
  int n = 0, cap = 0;
  entry *entries = NULL;
  uint64_t total = 0;
  for (struct dirent *f; (f = readdir(d)) != NULL;) {
    if (is_leftover_name(f->d_name)) remove_stale_leftover(dir, f->d_name);
    if (!is_entry_name(f->d_name)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      entry *grown = realloc(entries, (size_t)cap * sizeof(*grown));
      if (!grown) break;
      entries = grown;
    }
    memcpy(entries[n].name, f->d_name, 17);
    if (measure(dir, &entries[n]) == 0) total += entries[n++].bytes;
  }
  closedir(d);
  qsort(entries, (size_t)n, sizeof(*entries), older);
  for (int i = 0; i < n && total > limit; i++) {
    if (strcmp(entries[i].name, keep) == 0) continue;
    remove_entry(dir, entries[i].name);
    total -= entries[i].bytes;
  }
  free(entries);
}

void exec_cache_touch(const char *entry_file) { utimensat(AT_FDCWD, entry_file, NULL, 0); }
