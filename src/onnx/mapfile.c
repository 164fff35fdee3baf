/* mapfile.c - read-only file mappings for models and external data.
 * An empty file maps to size 0 without calling mmap; anything that is not
 * a regular file is refused. o2m_map_file_inside also checks, on the open
 * file itself (no window between check and use), that it lies inside a
 * directory. o2m_mapping_copy writes mapped bytes to a file without
 * bringing them into the process. */
#define _GNU_SOURCE /* copy_file_range */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/reader.h"
#include "util/diag.h"

static o2m_status io_fail(o2m_diag *diag, const char *path, const char *what,
                          int err) {
  return o2m_fail(diag, O2M_ERR_IO, "%s: cannot %s: %s", path, what,
                  strerror(err));
}

/* Maps the file open on `fd` and closes it. */
static o2m_status map_fd(int fd, const char *path, o2m_mapping *out, o2m_diag *diag) {
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int err = errno;
    close(fd);
    return io_fail(diag, path, "stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return o2m_fail(diag, O2M_ERR_IO, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return o2m_fail(diag, O2M_ERR_IO, "%s: too large to map", path);
  }
  size_t size = (size_t)st.st_size;
  out->dev = (uint64_t)st.st_dev;
  out->ino = (uint64_t)st.st_ino;
  if (size == 0) {
    close(fd);
    return O2M_OK;
  }
  void *addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  close(fd);
  if (addr == MAP_FAILED) return io_fail(diag, path, "map", err);
  out->addr = addr;
  out->size = size;
  return O2M_OK;
}

o2m_status o2m_map_file(const char *path, o2m_mapping *out, o2m_diag *diag) {
  out->addr = NULL;
  out->size = 0;
  out->path = path;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_fail(diag, path, "open", errno);
  return map_fd(fd, path, out, diag);
}

o2m_status o2m_map_file_inside(const char *path, const char *dir, o2m_mapping *out,
                               o2m_diag *diag) {
  out->addr = NULL;
  out->size = 0;
  out->path = path;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return io_fail(diag, path, "open", errno);
  /* what was opened, whatever happened to the path since it was checked */
  char link[64], opened[PATH_MAX];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, opened, sizeof(opened) - 1);
  if (n > 0) {
    opened[n] = 0;
    size_t len = strlen(dir);
    int within = len > 0 && strncmp(dir, opened, len) == 0 &&
                 (opened[len] == '/' || (dir[len - 1] == '/' && opened[len]));
    if (!within) {
      close(fd);
      return o2m_fail(diag, O2M_ERR_INVALID, "%s: resolves outside the data directory", path);
    }
  }
  return map_fd(fd, path, out, diag);
}

/* Copies up to len bytes at src (inside `m`) to out_fd through the kernel;
 * returns how many it copied. */
static size_t copy_range(const o2m_mapping *m, const uint8_t *src, size_t len, int out_fd) {
  int fd = open(m->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  size_t done = 0;
  /* the file at the path must still be the one mapped */
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->ino &&
      (uint64_t)st.st_size >= m->size) {
    off_t offset = (off_t)(src - (const uint8_t *)m->addr);
    while (done < len) {
      ssize_t n = copy_file_range(fd, &offset, out_fd, NULL, len - done, 0);
      if (n <= 0) break;
      done += (size_t)n;
    }
  }
  close(fd);
  return done;
}

size_t o2m_mapping_copy(const o2m_mapping *mappings, int n, const void *ptr, size_t len,
                        int out_fd) {
  const uint8_t *p = ptr;
  for (int i = 0; i < n; i++) {
    const uint8_t *base = mappings[i].addr;
    if (base && p >= base && len <= mappings[i].size && (size_t)(p - base) <= mappings[i].size - len)
      return copy_range(&mappings[i], p, len, out_fd);
  }
  return 0;
}

void o2m_unmap_file(o2m_mapping *mapping) {
  if (mapping->addr && mapping->size) munmap(mapping->addr, mapping->size);
  mapping->addr = NULL;
  mapping->size = 0;
}
