/*
 * copy.c - the one copy a writer pays: caller's buffer into staging.
 *
 * glibc's memcpy switches to non-temporal (streaming) stores only for copies
 * larger than a share of the last-level cache, and ckpt_write() copies in
 * pieces smaller than that.  Below the threshold every destination line is
 * first read for ownership, which on the machines we measured made a 4 MiB
 * piece copy run at about half the speed of one large memcpy.  Staging is
 * written once and read by ckptd (and the disk) later, never by this
 * process, so caching it is useless: stream it.
 */
#include <stdint.h>
#include <string.h>

#include "client_i.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define STREAM_MIN (256u << 10)   /* below this, memcpy is as good */

void cl_copy(void *dst, const void *src, size_t n)
{
	__m128i *d = dst;
	const __m128i *s = src;
	size_t blocks;

	if (n < STREAM_MIN || ((uintptr_t)dst & 15)) {
		memcpy(dst, src, n);
		return;
	}
	for (blocks = n / 64; blocks; blocks--, s += 4, d += 4) {
		__m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
		__m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);

		_mm_stream_si128(d, a);
		_mm_stream_si128(d + 1, b);
		_mm_stream_si128(d + 2, c);
		_mm_stream_si128(d + 3, e);
	}
	memcpy(d, s, n % 64);
	/* Streaming stores are weakly ordered: make them visible before the
	 * WRITE that tells ckptd to read them. */
	_mm_sfence();
}
#else
void cl_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}
#endif
