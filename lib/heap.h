/*
 * heap.h - what an allocation costs the process, for budgets that bound
 * memory (not bytes of a file): glibc's malloc rounds a request up to a
 * 16-byte chunk with an 8-byte header, and no chunk is under 32 bytes.
 * An estimate that counts small allocations (paths) as they are held; it
 * knows nothing of other allocators and is only ever used to bound.
 */
#ifndef CKPT_HEAP_H
#define CKPT_HEAP_H

#include <stddef.h>

/* The bytes a malloc(n) holds; 0 for n == 0 (nothing allocated). */
static inline size_t heap_held(size_t n)
{
	size_t c = (n + 8 + 15) & ~(size_t)15;

	return n == 0 ? 0 : c < 32 ? 32 : c;
}

#endif
