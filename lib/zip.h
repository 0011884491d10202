/*
 * zip.h - per-chunk compression for the drain: an optional byte shuffle
 * (as Blosc and HDF5 do it) followed by zstd.
 *
 * A shuffle of element size n (2 for bf16/fp16, 4 for fp32) regroups the
 * bytes of a chunk by their position within each element, so that the
 * slowly changing exponent bytes sit together and compress; it is undone on
 * decompression.  A chunk that does not shrink is stored raw: zip_compress()
 * says so by returning 0.
 *
 * A struct zip holds zstd contexts and a scratch buffer, made once and
 * reused ("allocate a context just once, and re-use it"); one per thread.
 */
#ifndef CKPT_ZIP_H
#define CKPT_ZIP_H

#include <stddef.h>
#include <stdint.h>

struct zip;

/* level: zstd level (1..19); shuffle: 0, 2 or 4; max_chunk: the largest
 * chunk to be compressed.  0, -EINVAL or -ENOMEM. */
int zip_new(int level, int shuffle, size_t max_chunk, struct zip **out);
void zip_free(struct zip *z);    /* NULL is a no-op */
/* Bytes of destination zip_compress() may need for len bytes. */
size_t zip_bound(size_t len);
/* Compress len bytes of src into dst (cap bytes).  Returns the frame's
 * length, 0 if it would not be smaller than len (store the chunk raw), or
 * -EINVAL/-ENOMEM/-EIO.  A frame is kept only if smaller than len, so cap
 * >= len - 1 always does; -EINVAL if len > max_chunk, or if a smaller cap
 * cannot hold the frame. */
long zip_compress(struct zip *z, const void *src, size_t len, void *dst,
		  size_t cap);
/* Decompress a frame of flen bytes into exactly len bytes of dst.  0, or
 * -CKPT_ECORRUPT if the frame is damaged or does not give len bytes, or
 * -EINVAL if len is larger than max_chunk. */
int zip_decompress(struct zip *z, const void *frame, size_t flen, void *dst,
		   size_t len);

/* The shuffle alone (exposed for tests): n is the element size; len need
 * not be a multiple of n (the tail is copied as is). */
void zip_shuffle(const uint8_t *src, uint8_t *dst, size_t len, int n);
void zip_unshuffle(const uint8_t *src, uint8_t *dst, size_t len, int n);

#endif
