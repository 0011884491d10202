/*
 * test_ec.c - unit tests for lib/ec: Reed-Solomon over ISA-L.
 *
 * The core test is exhaustive, as the style guide asks: for each k+m we ship
 * or might ship, encode random data, then for every set of up to m lost
 * fragments (data and parity alike) scribble over the lost buffers, rebuild
 * them and compare every fragment byte for byte with the original.  Other
 * tests cover odd lengths, the decode-table cache (alternating patterns must
 * not reuse stale tables), parameter checks, and that m+1 losses are refused.
 *
 * Data comes from a fixed-seed xorshift generator, so a failure reproduces.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "ec.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint8_t rng_byte(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint8_t)(rng_state >> 24);
}

/* k+m fragments of len bytes: the coded originals and a working copy. */
struct stripe {
	int n;
	size_t len;
	uint8_t *orig[EC_MAX_FRAGS];
	uint8_t *work[EC_MAX_FRAGS];
};

static void stripe_free(struct stripe *s)
{
	int i;

	for (i = 0; i < s->n; i++) {
		free(s->orig[i]);
		free(s->work[i]);
	}
}

/* Random data, encoded into orig; 0 or -ENOMEM. */
static int stripe_init(struct stripe *s, struct ec *ec, size_t len)
{
	int k = ec_k(ec), i;
	size_t j;

	memset(s, 0, sizeof(*s));
	s->n = k + ec_m(ec);
	s->len = len;
	for (i = 0; i < s->n; i++) {
		/* +1: malloc(0) may return NULL, and len may be 0 */
		s->orig[i] = malloc(len + 1);
		s->work[i] = malloc(len + 1);
		if (!s->orig[i] || !s->work[i]) {
			stripe_free(s);
			return -ENOMEM;
		}
	}
	for (i = 0; i < k; i++)
		for (j = 0; j < len; j++)
			s->orig[i][j] = rng_byte();
	ec_encode(ec, s->orig, s->orig + k, len);
	return 0;
}

/* Lose the fragments in lost, rebuild, and compare all with the originals. */
static int stripe_check(struct stripe *s, struct ec *ec, const uint8_t *lost)
{
	int i, ret;

	for (i = 0; i < s->n; i++) {
		if (lost[i])
			memset(s->work[i], 0xa5, s->len);
		else
			memcpy(s->work[i], s->orig[i], s->len);
	}
	ret = ec_reconstruct(ec, s->work, lost, s->len);
	if (ret < 0)
		return ret;
	for (i = 0; i < s->n; i++)
		if (memcmp(s->work[i], s->orig[i], s->len) != 0)
			return -EIO;
	return 0;
}

/*
 * Visit every subset of {0..n-1} with at most max members, in order of
 * bitmask; returns the number of subsets that failed to rebuild.
 */
static int check_all_losses(struct stripe *s, struct ec *ec, int max,
			    int *tried)
{
	uint8_t lost[EC_MAX_FRAGS];
	uint32_t mask;
	int i, bad = 0;

	for (mask = 1; mask < (1u << s->n); mask++) {
		if (__builtin_popcount(mask) > max)
			continue;
		for (i = 0; i < s->n; i++)
			lost[i] = (mask >> i) & 1;
		if (stripe_check(s, ec, lost) < 0)
			bad++;
		(*tried)++;
	}
	return bad;
}

/* Subsets of n things with 1..max members: what check_all_losses visits. */
static int count_patterns(int n, int max)
{
	int total = 0, c = 1, i;

	for (i = 1; i <= max; i++) {
		c = c * (n - i + 1) / i;        /* C(n, i), exact at each step */
		total += c;
	}
	return total;
}

static const struct {
	int k, m;
} shapes[] = {
	{ 1, 1 }, { 2, 1 }, { 3, 2 }, { 4, 2 }, { 6, 3 }, { 8, 3 },
	{ 10, 4 }, { 12, 4 },
};

#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static void test_exhaustive(void)
{
	size_t i;

	for (i = 0; i < NSHAPES; i++) {
		struct stripe s;
		struct ec *ec;
		int tried = 0, bad;

		CU_ASSERT_FATAL(ec_new(shapes[i].k, shapes[i].m, &ec) == 0);
		CU_ASSERT_FATAL(stripe_init(&s, ec, 4096 + 13) == 0);
		bad = check_all_losses(&s, ec, shapes[i].m, &tried);
		CU_ASSERT_EQUAL(bad, 0);
		CU_ASSERT_EQUAL(tried, count_patterns(shapes[i].k + shapes[i].m,
						      shapes[i].m));
		stripe_free(&s);
		ec_free(ec);
	}
}

/* Lengths around ISA-L's vector widths, and one bigger than a page. */
static void test_odd_lengths(void)
{
	static const size_t lens[] = { 0, 1, 15, 31, 32, 33, 63, 4095, 4097,
				       65536, 65537 };
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint8_t lost[EC_MAX_FRAGS] = { 0 };
		struct stripe s;
		struct ec *ec;
		int tried = 0;

		CU_ASSERT_FATAL(ec_new(4, 2, &ec) == 0);
		CU_ASSERT_FATAL(stripe_init(&s, ec, lens[i]) == 0);
		CU_ASSERT_EQUAL(check_all_losses(&s, ec, 2, &tried), 0);

		/* Nothing lost: a no-op that succeeds. */
		CU_ASSERT_EQUAL(stripe_check(&s, ec, lost), 0);
		stripe_free(&s);
		ec_free(ec);
	}
}

/* The largest code EC_MAX_FRAGS allows, with a sample of patterns. */
static void test_widest(void)
{
	uint8_t lost[EC_MAX_FRAGS];
	struct stripe s;
	struct ec *ec;
	int i, trial;

	CU_ASSERT_FATAL(ec_new(24, 8, &ec) == 0);
	CU_ASSERT_FATAL(stripe_init(&s, ec, 1000) == 0);
	for (trial = 0; trial < 200; trial++) {
		int nlost = 0;

		memset(lost, 0, sizeof(lost));
		while (nlost < 1 + trial % 8) {
			i = rng_byte() % 32;
			if (!lost[i]) {
				lost[i] = 1;
				nlost++;
			}
		}
		CU_ASSERT_EQUAL(stripe_check(&s, ec, lost), 0);
	}
	stripe_free(&s);
	ec_free(ec);
}

/* Alternate two patterns so a stale cached table would show. */
static void test_cache_alternates(void)
{
	uint8_t a[EC_MAX_FRAGS] = { 0 }, b[EC_MAX_FRAGS] = { 0 };
	struct stripe s;
	struct ec *ec;
	int i;

	CU_ASSERT_FATAL(ec_new(6, 3, &ec) == 0);
	CU_ASSERT_FATAL(stripe_init(&s, ec, 777) == 0);
	a[0] = a[7] = 1;
	b[1] = b[6] = b[8] = 1;
	for (i = 0; i < 6; i++) {
		CU_ASSERT_EQUAL(stripe_check(&s, ec, i & 1 ? b : a), 0);
		CU_ASSERT_EQUAL(stripe_check(&s, ec, i & 1 ? b : a), 0);
	}
	stripe_free(&s);
	ec_free(ec);
}

/* m+1 losses are refused, whether they fall on data or on parity. */
static void test_too_many_lost(void)
{
	size_t i;

	for (i = 0; i < NSHAPES; i++) {
		uint8_t first[EC_MAX_FRAGS] = { 0 }, last[EC_MAX_FRAGS] = { 0 };
		int k = shapes[i].k, m = shapes[i].m, j;
		struct stripe s;
		struct ec *ec;

		CU_ASSERT_FATAL(ec_new(k, m, &ec) == 0);
		CU_ASSERT_FATAL(stripe_init(&s, ec, 100) == 0);
		for (j = 0; j <= m; j++) {
			first[j] = 1;
			last[k + m - 1 - j] = 1;
		}
		CU_ASSERT_EQUAL(stripe_check(&s, ec, first), -EINVAL);
		CU_ASSERT_EQUAL(stripe_check(&s, ec, last), -EINVAL);
		stripe_free(&s);
		ec_free(ec);
	}
}

static void test_params(void)
{
	struct ec *ec = NULL;

	CU_ASSERT_EQUAL(ec_new(0, 1, &ec), -EINVAL);
	CU_ASSERT_EQUAL(ec_new(1, 0, &ec), -EINVAL);
	CU_ASSERT_EQUAL(ec_new(-1, 2, &ec), -EINVAL);
	CU_ASSERT_EQUAL(ec_new(30, 3, &ec), -EINVAL);
	CU_ASSERT_PTR_NULL(ec);

	CU_ASSERT_FATAL(ec_new(29, 3, &ec) == 0);
	CU_ASSERT_EQUAL(ec_k(ec), 29);
	CU_ASSERT_EQUAL(ec_m(ec), 3);
	ec_free(ec);
	ec_free(NULL);
}

/* Parity is a linear function of the data, as Reed-Solomon must be. */
static void test_parity_is_linear(void)
{
	uint8_t d0[64], d1[64], x[64], p0[64] = { 0 }, p1[64] = { 0 }, px[64] = { 0 };
	uint8_t *data[2], *par[1];
	struct ec *ec;
	int i;

	CU_ASSERT_FATAL(ec_new(2, 1, &ec) == 0);
	for (i = 0; i < 64; i++) {
		d0[i] = rng_byte();
		d1[i] = rng_byte();
	}
	data[0] = d0;
	data[1] = d1;
	par[0] = p0;
	ec_encode(ec, data, par, 64);

	/* encode(d) ^ encode(d') == encode(d ^ d') */
	for (i = 0; i < 64; i++)
		x[i] = d0[i] ^ 0x5a;
	data[0] = x;
	par[0] = p1;
	ec_encode(ec, data, par, 64);
	for (i = 0; i < 64; i++)
		d0[i] = 0x5a;
	memset(d1, 0, sizeof(d1));
	data[0] = d0;
	data[1] = d1;
	par[0] = px;
	ec_encode(ec, data, par, 64);
	for (i = 0; i < 64; i++)
		CU_ASSERT_EQUAL_FATAL(p0[i] ^ p1[i], px[i]);
	ec_free(ec);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "every loss of up to m fragments", test_exhaustive },
		{ "odd lengths", test_odd_lengths },
		{ "24+8 sampled", test_widest },
		{ "decode cache alternates", test_cache_alternates },
		{ "m+1 lost is -EINVAL", test_too_many_lost },
		{ "parameter checks", test_params },
		{ "parity is linear", test_parity_is_linear },
		{ NULL, NULL }
	};

	return unit_run("ec", tests);
}
