/* rt_alloc.c - the memory generated code allocates its buffers from
 * (finalize-memref-to-llvm's generic functions: _mlir_memref_to_llvm_alloc,
 * _mlir_memref_to_llvm_aligned_alloc, _mlir_memref_to_llvm_free).
 *
 * Owns: a cache of freed buffers per thread, by exact size. A model's
 * calls allocate the same sizes every time; without the cache, glibc
 * returns the larger ones to the system at each free (mmap'd chunks, heap
 * trimming) and the next call pays a page fault per 4 KiB it touches
 * (a 2-layer encoder called from a small program: 49 ms a call against
 * 4.7 ms with the memory kept). A thread keeps at most RT_CACHE_BYTES,
 * in lists by size (a hash of the size picks the list); what does not fit
 * is freed, and a thread's cache is freed when the thread ends. Every buffer has a 64-byte
 * header before it (its size and the address malloc gave), so buffers
 * must go back through o2m_rt_free, never free().
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

enum { HEADER = 64, RT_CACHE_LISTS = 256 };
#define RT_CACHE_BYTES ((size_t)256 << 20)

typedef struct header {
  size_t size;         /* the bytes asked for, rounded up to 64 */
  size_t align;        /* the alignment given */
  void *base;          /* what malloc returned */
  struct header *next; /* in its cache list */
} header;

typedef struct cache {
  size_t bytes;
  header *lists[RT_CACHE_LISTS];
} cache;

static size_t list_of(size_t size) { return (size / 64 * 2654435761u) % RT_CACHE_LISTS; }

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static header *header_of(void *p) { return (header *)((char *)p - HEADER); }

static void release_cache(void *c) {
  cache *k = c;
  for (int i = 0; k && i < RT_CACHE_LISTS; i++)
    for (header *h = k->lists[i], *next; h; h = next) next = h->next, free(h->base);
  free(k);
}

static void make_key(void) { pthread_key_create(&cache_key, release_cache); }

static cache *thread_cache(void) {
  pthread_once(&cache_once, make_key);
  cache *c = pthread_getspecific(cache_key);
  if (!c && (c = calloc(1, sizeof(*c))) != NULL && pthread_setspecific(cache_key, c) != 0) {
    free(c);
    c = NULL;
  }
  return c;
}

void *o2m_rt_aligned_alloc(size_t align, size_t size) {
  if (align < 64) align = 64;
  size = (size + 63) & ~(size_t)63;
  cache *c = thread_cache();
  for (header **p = c ? &c->lists[list_of(size)] : NULL; p && *p; p = &(*p)->next) {
    header *h = *p;
    if (h->size != size || h->align != align) continue;
    *p = h->next;
    c->bytes -= size;
    return (char *)h + HEADER;
  }
  if (size > SIZE_MAX - HEADER - align) return NULL;
  char *base = malloc(size + HEADER + align);
  if (!base) return NULL;
  uintptr_t at = ((uintptr_t)base + HEADER + align - 1) & ~(uintptr_t)(align - 1);
  header *h = (header *)(at - HEADER);
  *h = (header){size, align, base, NULL};
  return (void *)at;
}

void *o2m_rt_alloc(size_t size) { return o2m_rt_aligned_alloc(64, size); }

void o2m_rt_free(void *p) {
  if (!p) return;
  header *h = header_of(p);
  cache *c = thread_cache();
  if (c && c->bytes + h->size <= RT_CACHE_BYTES) {
    header **list = &c->lists[list_of(h->size)];
    h->next = *list;
    *list = h;
    c->bytes += h->size;
    return;
  }
  free(h->base);
}

o2m_rt_symbol rt_alloc_symbols_at(int i) {
  static const o2m_rt_symbol table[3] = {
      {"_mlir_memref_to_llvm_alloc", (void *)(uintptr_t)o2m_rt_alloc},
      {"_mlir_memref_to_llvm_aligned_alloc", (void *)(uintptr_t)o2m_rt_aligned_alloc},
      {"_mlir_memref_to_llvm_free", (void *)(uintptr_t)o2m_rt_free},
  };
  return table[i];
}

#ifdef O2M_RT_EXPORTS /* libonnx2mlir_rt: the names the generated code calls */
void *_mlir_memref_to_llvm_alloc(size_t size) { return o2m_rt_alloc(size); }
void *_mlir_memref_to_llvm_aligned_alloc(size_t align, size_t size) { return o2m_rt_aligned_alloc(align, size); }
void _mlir_memref_to_llvm_free(void *p) { o2m_rt_free(p); }
#endif
