/*
 * ec.h - Reed-Solomon erasure coding over ISA-L.
 *
 * k data fragments and m parity fragments with a Cauchy matrix
 * (gf_gen_cauchy1_matrix), whose every k x k submatrix is invertible, so any
 * k of the k+m fragments rebuild the rest.  The encode tables are built once
 * in ec_new(); decode tables are built per erasure pattern and cached for the
 * last pattern.  A struct ec is not thread-safe: use one per thread.
 *
 * Limits: 1 <= k, 1 <= m, k + m <= EC_MAX_FRAGS.
 */
#ifndef CKPT_EC_H
#define CKPT_EC_H

#include <stddef.h>
#include <stdint.h>

#define EC_MAX_FRAGS 32

struct ec;

/* 0, -EINVAL for bad k/m, -ENOMEM. */
int ec_new(int k, int m, struct ec **out);
void ec_free(struct ec *ec);   /* NULL is a no-op */
int ec_k(const struct ec *ec);
int ec_m(const struct ec *ec);

/* Compute parity[0..m-1] from data[0..k-1], each len bytes. */
void ec_encode(struct ec *ec, uint8_t *const *data, uint8_t *const *parity,
	       size_t len);

/*
 * Rebuild lost fragments in place.  frags[0..k+m-1] are the k data then m
 * parity fragments, each len bytes; lost[i] != 0 marks fragment i as missing
 * (its buffer is still valid memory and is overwritten with the rebuilt
 * bytes).  0, or -EINVAL if more than m are lost, -ENOMEM.
 */
int ec_reconstruct(struct ec *ec, uint8_t *const *frags, const uint8_t *lost,
		   size_t len);

#endif
