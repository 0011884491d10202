/*
 * test_zip.c - the byte shuffle and per-chunk zstd: shuffle round trips and
 * layout for odd lengths, compress/decompress round trips on random bytes
 * (stored raw), zeros, and bf16- and fp32-like weights drawn from N(0, 0.02)
 * (where the shuffle must pay), and damaged frames or a wrong length
 * reported as corruption.
 */
#include <errno.h>
#include <math.h>            /* frexp, ldexp: in libc */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "ckpt.h"
#include "zip.h"

#define CHUNK (1u << 20)

/* splitmix64: a small, fixed, seedable generator. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (-1, 1). */
static double rng_signed(void)
{
	return ((rng_next() >> 11) + 0.5) * (2.0 / 9007199254740992.0) - 1.0;
}

/*
 * The unit tests link without libm, so the two functions Box-Muller needs
 * are computed here; frexp() and ldexp() are in libc.  Both are exact to a
 * few ulps, far more than test data needs.
 */
static double ln_pos(double x)
{
	double s, s2, term, sum = 0;
	int e, k;

	/* x = m * 2^e, m in [0.5, 1); ln m = 2 atanh((m - 1) / (m + 1)). */
	x = frexp(x, &e);
	s = (x - 1) / (x + 1);
	s2 = s * s;
	term = s;
	for (k = 1; k < 40; k += 2) {
		sum += term / k;
		term *= s2;
	}
	return 2 * sum + e * 0.6931471805599453;
}

static double sqrt_pos(double x)
{
	double y = 1;
	int e, i;

	/* x = m * 2^e with e even, m in [0.5, 2): Newton from 1. */
	x = frexp(x, &e);
	if (e & 1) {
		x *= 2;
		e--;
	}
	for (i = 0; i < 8; i++)
		y = 0.5 * (y + x / y);
	return ldexp(y, e / 2);
}

static void fill_random(uint8_t *p, size_t len)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < len; i += 8) {
		v = rng_next();
		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* Box-Muller, in Marsaglia's polar form (no sin or cos): n normal(0,
 * sigma) floats. */
static void fill_normal(float *f, size_t n, double sigma)
{
	double u, v, r, k;
	size_t i;

	for (i = 0; i < n; i += 2) {
		do {
			u = rng_signed();
			v = rng_signed();
			r = u * u + v * v;
		} while (r >= 1 || r == 0);
		k = sqrt_pos(-2 * ln_pos(r) / r) * sigma;
		f[i] = (float)(u * k);
		if (i + 1 < n)
			f[i + 1] = (float)(v * k);
	}
}

/* fp32 -> bf16, round to nearest even (no NaNs here). */
static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static void fill_fp32(uint8_t *p, size_t len)
{
	fill_normal((float *)(void *)p, len / 4, 0.02);
}

static void fill_bf16(uint8_t *p, size_t len)
{
	float *f = malloc(len / 2 * sizeof(*f));
	uint16_t h;
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fill_normal(f, len / 2, 0.02);
	for (i = 0; i < len / 2; i++) {
		h = to_bf16(f[i]);
		memcpy(p + 2 * i, &h, 2);
	}
	free(f);
}

static void check_shuffle(size_t len, int n)
{
	uint8_t *src = malloc(len + 1), *mid = malloc(len + 1),
		*back = malloc(len + 1);
	size_t ne = len / n, i;
	int j, ok = 1;

	CU_ASSERT_FATAL(src && mid && back);
	fill_random(src, len);
	/* A guard byte past the end must survive. */
	mid[len] = 0xa5;
	back[len] = 0x5a;
	zip_shuffle(src, mid, len, n);
	for (i = 0; i < ne && ok; i++) {
		for (j = 0; j < n; j++)
			ok &= mid[(size_t)j * ne + i] == src[i * n + j];
	}
	CU_ASSERT(ok);
	CU_ASSERT(memcmp(mid + ne * n, src + ne * n, len - ne * n) == 0);
	zip_unshuffle(mid, back, len, n);
	CU_ASSERT(memcmp(back, src, len) == 0);
	CU_ASSERT_EQUAL(mid[len], 0xa5);
	CU_ASSERT_EQUAL(back[len], 0x5a);
	free(src);
	free(mid);
	free(back);
}

static void test_shuffle(void)
{
	static const size_t lens[] = {
		0, 1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 4096, 4097, 4099,
		65536 + 7, CHUNK,
	};
	size_t i;

	rng_state = 1;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		check_shuffle(lens[i], 2);
		check_shuffle(lens[i], 4);
		check_shuffle(lens[i], 1);      /* a copy */
	}
}

/* Compress len bytes of src with z, check the frame expands back, and
 * return its length (0: stored raw). */
static long round_trip(struct zip *z, const uint8_t *src, size_t len)
{
	uint8_t *frame = malloc(zip_bound(len)), *back = malloc(len + 1);
	long n;

	CU_ASSERT_FATAL(frame && back);
	n = zip_compress(z, src, len, frame, zip_bound(len));
	CU_ASSERT(n >= 0 && n < (long)len + (len == 0));
	if (n > 0) {
		memset(back, 0, len);
		CU_ASSERT_EQUAL(zip_decompress(z, frame, n, back, len), 0);
		CU_ASSERT(memcmp(back, src, len) == 0);
	}
	free(frame);
	free(back);
	return n;
}

static void test_new(void)
{
	struct zip *z = (struct zip *)&z;

	CU_ASSERT_EQUAL(zip_new(0, 0, CHUNK, &z), -EINVAL);
	CU_ASSERT_PTR_NULL(z);
	CU_ASSERT_EQUAL(zip_new(20, 0, CHUNK, &z), -EINVAL);
	CU_ASSERT_EQUAL(zip_new(-1, 0, CHUNK, &z), -EINVAL);
	CU_ASSERT_EQUAL(zip_new(1, 3, CHUNK, &z), -EINVAL);
	CU_ASSERT_EQUAL(zip_new(1, 8, CHUNK, &z), -EINVAL);
	CU_ASSERT_EQUAL(zip_new(1, 2, 0, &z), -EINVAL);
	CU_ASSERT_EQUAL(zip_new(19, 4, CHUNK, &z), 0);
	CU_ASSERT_PTR_NOT_NULL(z);
	zip_free(z);
	zip_free(NULL);
	CU_ASSERT(zip_bound(CHUNK) >= CHUNK);
}

static void test_random(void)
{
	uint8_t *src = malloc(CHUNK);
	struct zip *z;

	CU_ASSERT_FATAL(src != NULL);
	rng_state = 2;
	fill_random(src, CHUNK);
	CU_ASSERT_EQUAL_FATAL(zip_new(1, 0, CHUNK, &z), 0);
	CU_ASSERT_EQUAL(round_trip(z, src, CHUNK), 0);
	CU_ASSERT_EQUAL(round_trip(z, src, 100), 0);
	zip_free(z);
	CU_ASSERT_EQUAL_FATAL(zip_new(3, 4, CHUNK, &z), 0);
	CU_ASSERT_EQUAL(round_trip(z, src, CHUNK), 0);
	zip_free(z);
	free(src);
}

static void test_zeros(void)
{
	uint8_t *src = calloc(1, CHUNK);
	struct zip *z;
	int shuffle;

	CU_ASSERT_FATAL(src != NULL);
	for (shuffle = 0; shuffle <= 4; shuffle += 2) {
		CU_ASSERT_EQUAL_FATAL(zip_new(1, shuffle, CHUNK, &z), 0);
		CU_ASSERT(round_trip(z, src, CHUNK) > 0);
		CU_ASSERT(round_trip(z, src, CHUNK) < CHUNK / 1000);
		CU_ASSERT(round_trip(z, src, 4097) < 100);
		/* Too short to shrink. */
		CU_ASSERT_EQUAL(round_trip(z, src, 0), 0);
		CU_ASSERT_EQUAL(round_trip(z, src, 1), 0);
		zip_free(z);
	}
	free(src);
}

/* Frame length of src compressed at level 1 with and without the shuffle
 * of element size n: the shuffle must give the smaller frame. */
static void check_weights(void (*fill)(uint8_t *, size_t), int n)
{
	uint8_t *src = malloc(CHUNK);
	struct zip *plain, *shuf;
	long a, b;

	CU_ASSERT_FATAL(src != NULL);
	fill(src, CHUNK);
	CU_ASSERT_EQUAL_FATAL(zip_new(1, 0, CHUNK, &plain), 0);
	CU_ASSERT_EQUAL_FATAL(zip_new(1, n, CHUNK, &shuf), 0);
	a = round_trip(plain, src, CHUNK);
	b = round_trip(shuf, src, CHUNK);
	CU_ASSERT(b > 0);
	CU_ASSERT(a == 0 || b < a);
	/* Shuffled, these weights compress by at least 10%. */
	CU_ASSERT(b < CHUNK * 0.9);
	/* Odd lengths, with a tail the shuffle leaves alone. */
	CU_ASSERT(round_trip(shuf, src, CHUNK - 3) > 0);
	CU_ASSERT(round_trip(shuf, src, 4097) >= 0);
	zip_free(plain);
	zip_free(shuf);
	free(src);
}

static void test_weights(void)
{
	rng_state = 3;
	check_weights(fill_bf16, 2);
	check_weights(fill_fp32, 4);
}

/* A frame of bf16 weights for the damage tests; *z shuffles by 2. */
static long make_frame(struct zip **z, uint8_t *src, uint8_t *frame)
{
	long n;

	rng_state = 4;
	fill_bf16(src, CHUNK);
	CU_ASSERT_EQUAL_FATAL(zip_new(1, 2, CHUNK, z), 0);
	n = zip_compress(*z, src, CHUNK, frame, zip_bound(CHUNK));
	CU_ASSERT_FATAL(n > 0);
	return n;
}

static void test_corrupt(void)
{
	uint8_t junk[4096];
	uint8_t *src = malloc(CHUNK), *frame = malloc(zip_bound(CHUNK) + 1),
		*dst = malloc(CHUNK);
	struct zip *z;
	long n, i;

	CU_ASSERT_FATAL(src && frame && dst);
	n = make_frame(&z, src, frame);
	/* Flips anywhere: header, blocks, the checksum at the end. */
	for (i = 0; i < n; i += n / 97 + 1) {
		frame[i] ^= 0x10;
		CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, CHUNK),
				-CKPT_ECORRUPT);
		frame[i] ^= 0x10;
	}
	frame[n - 1] ^= 1;
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, CHUNK),
			-CKPT_ECORRUPT);
	frame[n - 1] ^= 1;
	/* Cut short, or with a byte too many. */
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n - 1, dst, CHUNK),
			-CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n / 2, dst, CHUNK),
			-CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(zip_decompress(z, frame, 0, dst, CHUNK),
			-CKPT_ECORRUPT);
	frame[n] = 0;
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n + 1, dst, CHUNK),
			-CKPT_ECORRUPT);
	/* Not a frame at all. */
	rng_state = 5;
	fill_random(junk, sizeof(junk));
	CU_ASSERT_EQUAL(zip_decompress(z, junk, sizeof(junk), dst, CHUNK),
			-CKPT_ECORRUPT);
	/* The context is still good after all that. */
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, CHUNK), 0);
	CU_ASSERT(memcmp(dst, src, CHUNK) == 0);
	zip_free(z);
	free(src);
	free(frame);
	free(dst);
}

static void test_wrong_length(void)
{
	uint8_t *src = malloc(CHUNK), *frame = malloc(zip_bound(CHUNK)),
		*dst = malloc(CHUNK);
	struct zip *z, *big;
	long n;

	CU_ASSERT_FATAL(src && frame && dst);
	n = make_frame(&z, src, frame);
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, CHUNK - 1),
			-CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, CHUNK - 4096),
			-CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, 0), -CKPT_ECORRUPT);
	/* More than the frame holds, in a context that can take it. */
	CU_ASSERT_EQUAL_FATAL(zip_new(1, 2, 2 * CHUNK, &big), 0);
	free(dst);
	dst = malloc(2 * CHUNK);
	CU_ASSERT_FATAL(dst != NULL);
	CU_ASSERT_EQUAL(zip_decompress(big, frame, n, dst, CHUNK + 1),
			-CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(zip_decompress(big, frame, n, dst, CHUNK), 0);
	CU_ASSERT(memcmp(dst, src, CHUNK) == 0);
	/* More than this context was made for. */
	CU_ASSERT_EQUAL(zip_decompress(z, frame, n, dst, CHUNK + 1), -EINVAL);
	zip_free(big);
	zip_free(z);
	free(src);
	free(frame);
	free(dst);
}

/* The destination only needs len - 1 bytes; less than the frame is an
 * error, not a false "stored raw". */
static void test_cap(void)
{
	uint8_t *src = malloc(CHUNK), *frame = malloc(zip_bound(CHUNK)),
		*dst = malloc(CHUNK);
	struct zip *z;
	long n;

	CU_ASSERT_FATAL(src && frame && dst);
	n = make_frame(&z, src, frame);
	CU_ASSERT_EQUAL(zip_compress(z, src, CHUNK, dst, CHUNK - 1), n);
	/* zstd may want a little slack past the frame's end, so a cap of
	 * exactly n is not promised to do. */
	CU_ASSERT_EQUAL(zip_compress(z, src, CHUNK, dst, n + 4096), n);
	CU_ASSERT_EQUAL(zip_compress(z, src, CHUNK, dst, n - 1), -EINVAL);
	CU_ASSERT_EQUAL(zip_compress(z, src, CHUNK, dst, 0), -EINVAL);
	CU_ASSERT_EQUAL(zip_compress(z, src, CHUNK + 1, dst, CHUNK), -EINVAL);
	zip_free(z);
	free(src);
	free(frame);
	free(dst);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "shuffle", test_shuffle },
		{ "new", test_new },
		{ "random", test_random },
		{ "zeros", test_zeros },
		{ "weights", test_weights },
		{ "corrupt", test_corrupt },
		{ "wrong_length", test_wrong_length },
		{ "cap", test_cap },
		{ NULL, NULL }
	};

	return unit_run("zip", tests);
}
