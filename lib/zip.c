/*
 * zip.c - per-chunk compression for the drain: an optional byte shuffle,
 * then one zstd frame per chunk.
 *
 * Dense floating-point weights barely compress as they are, but their bytes
 * are not equally random: the sign and exponent byte of a float changes
 * slowly across a tensor while the low mantissa bytes look like noise.  The
 * shuffle (as in Blosc and HDF5) writes byte 0 of every element, then byte
 * 1, and so on, so that zstd sees the exponent bytes side by side.  It runs
 * at drain speed, so on x86-64 it moves 16 elements at a time with SSE2
 * (part of the x86-64 baseline, so no run-time dispatch); elsewhere, and for
 * the tail of a chunk, a plain loop per element byte does it.
 *
 * Each struct zip keeps one compression and one decompression context and a
 * scratch buffer for the shuffled bytes, made once and reused for every
 * chunk, as zstd.h asks.  The scratch is touched once when it is made, so
 * that the first chunks do not pay for faulting it in.  Frames carry their
 * content size and zstd's own checksum: the manifest's CRC32C covers the
 * expanded bytes, but a damaged frame should be reported as damaged by
 * zip_decompress() itself, not merely expand to something else.
 *
 * A chunk whose frame would not be smaller than the chunk is stored raw.
 * Compressing into a buffer of len - 1 bytes finds that out for free: zstd
 * stops with dstSize_tooSmall as soon as the frame outgrows it.
 *
 * Nothing here is shared between struct zips; one struct zip is not safe to
 * use from two threads at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>
#include <zstd_errors.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ckpt.h"
#include "zip.h"

struct zip {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	int shuffle;             /* element size, or 0 */
	size_t max_chunk;
	uint8_t *scratch;        /* max_chunk bytes when shuffling, else NULL */
};

/* Scalar shuffle of elements [from, ne) of n bytes: the SIMD loops' tail,
 * and the whole job where there is no SIMD or n is neither 2 nor 4. */
static void shuffle_tail(const uint8_t *src, uint8_t *dst, size_t from,
			 size_t ne, int n)
{
	size_t i;
	int j;

	for (j = 0; j < n; j++) {
		uint8_t *out = dst + (size_t)j * ne;

		for (i = from; i < ne; i++)
			out[i] = src[i * n + j];
	}
}

static void unshuffle_tail(const uint8_t *src, uint8_t *dst, size_t from,
			   size_t ne, int n)
{
	size_t i;
	int j;

	for (j = 0; j < n; j++) {
		const uint8_t *in = src + (size_t)j * ne;

		for (i = from; i < ne; i++)
			dst[i * n + j] = in[i];
	}
}

#ifdef __SSE2__
#define load16(p)     _mm_loadu_si128((const __m128i *)(const void *)(p))
#define store16(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)

/* Split the 32 bytes a:b into their even and their odd bytes. */
static inline void split_bytes(__m128i a, __m128i b, __m128i *even,
			       __m128i *odd)
{
	const __m128i lo = _mm_set1_epi16(0x00ff);

	*even = _mm_packus_epi16(_mm_and_si128(a, lo), _mm_and_si128(b, lo));
	*odd = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
}

/* Shuffle 16 elements at a time; returns how many elements it did. */
static size_t shuffle_simd(const uint8_t *src, uint8_t *dst, size_t ne, int n)
{
	__m128i e0, e1, o0, o1, b0, b1, b2, b3;
	size_t i = 0;

	if (n == 2) {
		for (; i + 16 <= ne; i += 16) {
			split_bytes(load16(src + 2 * i),
				    load16(src + 2 * i + 16), &b0, &b1);
			store16(dst + i, b0);
			store16(dst + ne + i, b1);
		}
	} else if (n == 4) {
		for (; i + 16 <= ne; i += 16) {
			const uint8_t *p = src + 4 * i;

			/* Two rounds of even/odd: bytes {0,2} and {1,3},
			 * then each pair apart. */
			split_bytes(load16(p), load16(p + 16), &e0, &o0);
			split_bytes(load16(p + 32), load16(p + 48), &e1, &o1);
			split_bytes(e0, e1, &b0, &b2);
			split_bytes(o0, o1, &b1, &b3);
			store16(dst + i, b0);
			store16(dst + ne + i, b1);
			store16(dst + 2 * ne + i, b2);
			store16(dst + 3 * ne + i, b3);
		}
	}
	return i;
}

static size_t unshuffle_simd(const uint8_t *src, uint8_t *dst, size_t ne,
			     int n)
{
	__m128i a, b, c, d, l01, h01, l23, h23;
	size_t i = 0;

	if (n == 2) {
		for (; i + 16 <= ne; i += 16) {
			a = load16(src + i);
			b = load16(src + ne + i);
			store16(dst + 2 * i, _mm_unpacklo_epi8(a, b));
			store16(dst + 2 * i + 16, _mm_unpackhi_epi8(a, b));
		}
	} else if (n == 4) {
		for (; i + 16 <= ne; i += 16) {
			uint8_t *p = dst + 4 * i;

			a = load16(src + i);
			b = load16(src + ne + i);
			c = load16(src + 2 * ne + i);
			d = load16(src + 3 * ne + i);
			/* Pair bytes 0,1 and 2,3, then the pairs. */
			l01 = _mm_unpacklo_epi8(a, b);
			h01 = _mm_unpackhi_epi8(a, b);
			l23 = _mm_unpacklo_epi8(c, d);
			h23 = _mm_unpackhi_epi8(c, d);
			store16(p, _mm_unpacklo_epi16(l01, l23));
			store16(p + 16, _mm_unpackhi_epi16(l01, l23));
			store16(p + 32, _mm_unpacklo_epi16(h01, h23));
			store16(p + 48, _mm_unpackhi_epi16(h01, h23));
		}
	}
	return i;
}
#else
static size_t shuffle_simd(const uint8_t *src, uint8_t *dst, size_t ne, int n)
{
	return 0;
}

static size_t unshuffle_simd(const uint8_t *src, uint8_t *dst, size_t ne,
			     int n)
{
	return 0;
}
#endif

void zip_shuffle(const uint8_t *src, uint8_t *dst, size_t len, int n)
{
	size_t ne, done;

	if (n < 2) {
		memcpy(dst, src, len);
		return;
	}
	ne = len / (size_t)n;
	done = shuffle_simd(src, dst, ne, n);
	shuffle_tail(src, dst, done, ne, n);
	memcpy(dst + ne * n, src + ne * n, len - ne * n);
}

void zip_unshuffle(const uint8_t *src, uint8_t *dst, size_t len, int n)
{
	size_t ne, done;

	if (n < 2) {
		memcpy(dst, src, len);
		return;
	}
	ne = len / (size_t)n;
	done = unshuffle_simd(src, dst, ne, n);
	unshuffle_tail(src, dst, done, ne, n);
	memcpy(dst + ne * n, src + ne * n, len - ne * n);
}

/* Parameters that stay for the context's life (ZSTD_compress2 keeps them
 * across frames). */
static int zip_set_params(ZSTD_CCtx *cctx, int level)
{
	size_t r;

	r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	return ZSTD_isError(r) ? -EINVAL : 0;
}

int zip_new(int level, int shuffle, size_t max_chunk, struct zip **out)
{
	struct zip *z;
	int ret;

	*out = NULL;
	if (level < 1 || level > 19 || max_chunk == 0 ||
	    (shuffle != 0 && shuffle != 2 && shuffle != 4))
		return -EINVAL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->shuffle = shuffle;
	z->max_chunk = max_chunk;
	ret = -ENOMEM;
	z->cctx = ZSTD_createCCtx();
	if (!z->cctx)
		goto out_free_zip;
	z->dctx = ZSTD_createDCtx();
	if (!z->dctx)
		goto out_free_cctx;
	if (shuffle) {
		z->scratch = malloc(max_chunk);
		if (!z->scratch)
			goto out_free_dctx;
		memset(z->scratch, 0, max_chunk);       /* fault it in now */
	}
	ret = zip_set_params(z->cctx, level);
	if (ret)
		goto out_free_scratch;
	*out = z;
	return 0;

out_free_scratch:
	free(z->scratch);
out_free_dctx:
	ZSTD_freeDCtx(z->dctx);
out_free_cctx:
	ZSTD_freeCCtx(z->cctx);
out_free_zip:
	free(z);
	return ret;
}

void zip_free(struct zip *z)
{
	if (!z)
		return;
	free(z->scratch);
	ZSTD_freeDCtx(z->dctx);
	ZSTD_freeCCtx(z->cctx);
	free(z);
}

size_t zip_bound(size_t len)
{
	return ZSTD_compressBound(len);
}

long zip_compress(struct zip *z, const void *src, size_t len, void *dst,
		  size_t cap)
{
	const void *in = src;
	size_t room, r;

	if (len > z->max_chunk || len > (size_t)LONG_MAX)
		return -EINVAL;
	if (len < 2)
		return 0;
	if (z->shuffle) {
		zip_shuffle(src, z->scratch, len, z->shuffle);
		in = z->scratch;
	}
	/* A frame of len bytes or more is no use: give zstd no more room. */
	room = cap < len - 1 ? cap : len - 1;
	r = ZSTD_compress2(z->cctx, dst, room, in, len);
	if (!ZSTD_isError(r))
		return (long)r;
	switch (ZSTD_getErrorCode(r)) {
	case ZSTD_error_dstSize_tooSmall:
		/* With the full len - 1 bytes, it does not shrink; with less
		 * the caller's buffer is too small to tell. */
		return room == len - 1 ? 0 : -EINVAL;
	case ZSTD_error_memory_allocation:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* A frame must be exactly one zstd frame of flen bytes that says it holds
 * len bytes. */
static int zip_check_frame(const void *frame, size_t flen, size_t len)
{
	unsigned long long size;

	if (ZSTD_findFrameCompressedSize(frame, flen) != flen)
		return -CKPT_ECORRUPT;
	size = ZSTD_getFrameContentSize(frame, flen);
	/* UNKNOWN and ERROR are huge values that never equal a chunk's. */
	if (size != len)
		return -CKPT_ECORRUPT;
	return 0;
}

int zip_decompress(struct zip *z, const void *frame, size_t flen, void *dst,
		   size_t len)
{
	void *out = z->shuffle ? z->scratch : dst;
	size_t r;
	int ret;

	if (len > z->max_chunk)
		return -EINVAL;
	ret = zip_check_frame(frame, flen, len);
	if (ret)
		return ret;
	/* One-shot: every call starts the context afresh, so a damaged
	 * frame leaves nothing behind for the next. */
	r = ZSTD_decompressDCtx(z->dctx, out, len, frame, flen);
	if (ZSTD_isError(r) || r != len)
		return -CKPT_ECORRUPT;
	if (z->shuffle)
		zip_unshuffle(out, dst, len, z->shuffle);
	return 0;
}
