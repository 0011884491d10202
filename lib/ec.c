/*
 * ec.c - Reed-Solomon erasure coding over ISA-L.
 *
 * The code is systematic: the (k+m) x k encode matrix from
 * gf_gen_cauchy1_matrix() has the identity in its top k rows, so fragments
 * 0..k-1 are the data itself and rows k..k+m-1 give the parity.  Encoding is
 * one ec_encode_data() call with tables expanded once in ec_new().
 *
 * Reconstruction follows the recipe of ISA-L's ec_simple_example.c: take the
 * first k surviving fragments, invert the k x k submatrix of their encode
 * rows, and that inverse maps survivors back to data.  A lost data fragment d
 * is row d of the inverse; a lost parity fragment p is encode row p times the
 * inverse, so data and parity are rebuilt by the same single
 * ec_encode_data() pass.  Building that matrix costs a k^3 inversion and a
 * table expansion, so the tables for the last erasure pattern are kept: a
 * drain that reads many stripes with the same missing device pays it once.
 *
 * All buffers are sized in ec_new(); encode and reconstruct never allocate.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l.h>

#include "ec.h"

/* ec_encode_data() takes an int length; longer buffers go in slices. */
#define EC_SLICE (1 << 30)

struct ec {
	int k;                      /* data fragments */
	int m;                      /* parity fragments */
	uint8_t *encode_matrix;     /* (k+m) x k, identity on top */
	uint8_t *encode_tbls;       /* k * m * 32, expanded parity rows */
	uint8_t *decode_tbls;       /* k * m * 32, for decode_lost */
	uint32_t decode_lost;       /* erasure bitmask of the cached tables */
	int decode_valid;           /* decode_* describe decode_lost */
	int decode_nlost;           /* rows in decode_tbls */
	uint8_t decode_src[EC_MAX_FRAGS];  /* survivors fed to the decode */
	uint8_t decode_out[EC_MAX_FRAGS];  /* fragments it rebuilds, in order */
};

int ec_new(int k, int m, struct ec **out)
{
	struct ec *ec;
	size_t tbl_len;

	if (k < 1 || m < 1 || k + m > EC_MAX_FRAGS)
		return -EINVAL;

	ec = calloc(1, sizeof(*ec));
	if (!ec)
		return -ENOMEM;
	ec->k = k;
	ec->m = m;

	ec->encode_matrix = malloc((size_t)(k + m) * (size_t)k);
	if (!ec->encode_matrix)
		goto out_free_ec;
	tbl_len = (size_t)k * (size_t)m * 32;
	ec->encode_tbls = malloc(tbl_len);
	if (!ec->encode_tbls)
		goto out_free_matrix;
	ec->decode_tbls = malloc(tbl_len);
	if (!ec->decode_tbls)
		goto out_free_encode_tbls;

	gf_gen_cauchy1_matrix(ec->encode_matrix, k + m, k);
	ec_init_tables(k, m, ec->encode_matrix + (size_t)k * (size_t)k,
		       ec->encode_tbls);
	*out = ec;
	return 0;

out_free_encode_tbls:
	free(ec->encode_tbls);
out_free_matrix:
	free(ec->encode_matrix);
out_free_ec:
	free(ec);
	return -ENOMEM;
}

void ec_free(struct ec *ec)
{
	if (!ec)
		return;
	free(ec->decode_tbls);
	free(ec->encode_tbls);
	free(ec->encode_matrix);
	free(ec);
}

int ec_k(const struct ec *ec)
{
	return ec->k;
}

int ec_m(const struct ec *ec)
{
	return ec->m;
}

/*
 * out[0..rows-1] = tbls applied to src[0..k-1], len bytes each, in slices
 * that fit ec_encode_data()'s int length.
 */
static void ec_apply(uint8_t *tbls, int k, int rows, uint8_t *const *src,
		     uint8_t *const *out, size_t len)
{
	uint8_t *s[EC_MAX_FRAGS], *o[EC_MAX_FRAGS];
	size_t done, n;
	int i;

	for (done = 0; done < len; done += n) {
		n = len - done < EC_SLICE ? len - done : EC_SLICE;
		for (i = 0; i < k; i++)
			s[i] = src[i] + done;
		for (i = 0; i < rows; i++)
			o[i] = out[i] + done;
		ec_encode_data((int)n, k, rows, tbls, s, o);
	}
}

void ec_encode(struct ec *ec, uint8_t *const *data, uint8_t *const *parity,
	       size_t len)
{
	ec_apply(ec->encode_tbls, ec->k, ec->m, data, parity, len);
}

/*
 * Build and cache the decode tables for the erasure bitmask lost, which has
 * between 1 and m bits set.
 */
static int ec_build_decode(struct ec *ec, uint32_t lost)
{
	uint8_t sub[EC_MAX_FRAGS * EC_MAX_FRAGS];
	uint8_t inv[EC_MAX_FRAGS * EC_MAX_FRAGS];
	uint8_t rows[EC_MAX_FRAGS * EC_MAX_FRAGS];
	const uint8_t *enc = ec->encode_matrix;
	int k = ec->k, n = ec->k + ec->m;
	size_t kk = (size_t)k;          /* row stride, for offsets */
	int i, j, f, nsrc = 0, nlost = 0;

	ec->decode_valid = 0;

	/* The first k survivors, and their encode rows as a k x k matrix. */
	for (f = 0; f < n && nsrc < k; f++) {
		if (lost & (1u << f))
			continue;
		ec->decode_src[nsrc] = (uint8_t)f;
		memcpy(sub + (size_t)nsrc * kk, enc + (size_t)f * kk, kk);
		nsrc++;
	}
	if (nsrc < k)
		return -EINVAL;
	/* Cannot fail for a Cauchy matrix; checked all the same. */
	if (gf_invert_matrix(sub, inv, k) < 0)
		return -EINVAL;

	/* A decode row per lost fragment: row of inv, or parity row x inv. */
	for (f = 0; f < n; f++) {
		uint8_t *row = rows + (size_t)nlost * kk;

		if (!(lost & (1u << f)))
			continue;
		ec->decode_out[nlost++] = (uint8_t)f;
		if (f < k) {
			memcpy(row, inv + (size_t)f * kk, kk);
			continue;
		}
		for (j = 0; j < k; j++) {
			uint8_t s = 0;

			for (i = 0; i < k; i++)
				s ^= gf_mul(enc[f * k + i], inv[i * k + j]);
			row[j] = s;
		}
	}

	ec_init_tables(k, nlost, rows, ec->decode_tbls);
	ec->decode_nlost = nlost;
	ec->decode_lost = lost;
	ec->decode_valid = 1;
	return 0;
}

int ec_reconstruct(struct ec *ec, uint8_t *const *frags, const uint8_t *lost,
		   size_t len)
{
	uint8_t *src[EC_MAX_FRAGS], *out[EC_MAX_FRAGS];
	int n = ec->k + ec->m;
	uint32_t mask = 0;
	int i, nlost = 0, ret;

	for (i = 0; i < n; i++) {
		if (!lost[i])
			continue;
		mask |= 1u << i;
		nlost++;
	}
	if (nlost == 0)
		return 0;
	if (nlost > ec->m)
		return -EINVAL;

	if (!ec->decode_valid || ec->decode_lost != mask) {
		ret = ec_build_decode(ec, mask);
		if (ret < 0)
			return ret;
	}

	for (i = 0; i < ec->k; i++)
		src[i] = frags[ec->decode_src[i]];
	for (i = 0; i < ec->decode_nlost; i++)
		out[i] = frags[ec->decode_out[i]];
	ec_apply(ec->decode_tbls, ec->k, ec->decode_nlost, src, out, len);
	return 0;
}
