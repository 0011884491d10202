/*
 * ckpt_ecrate.c - the raw ISA-L encode rate, for the protect benchmark
 * (tools/bench_protect.sh): the same k+m and the same 1 MiB chunks that
 * ckptd's protection uses, over SIZE bytes of data held in memory.
 *
 *   ckpt_ecrate K M SIZE_MIB    prints "ec K+M: BYTES bytes in NS ns"
 *
 * The rate counts data bytes (what protection counts), encoded
 * stripe by stripe with ec_encode() (lib/ec.h, ec_encode_data inside).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec.h"

#define CHUNK (1u << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint8_t *data, *parity, *d[EC_MAX_FRAGS], *p[EC_MAX_FRAGS];
	uint64_t stripes, s, t0, t1, bytes;
	struct ec *ec;
	int k, m, i;

	if (argc != 4)
		return 2;
	k = atoi(argv[1]);
	m = atoi(argv[2]);
	bytes = strtoull(argv[3], NULL, 0) << 20;
	if (ec_new(k, m, &ec) < 0)
		return 2;
	stripes = bytes / ((uint64_t)k * CHUNK);
	if (!stripes)
		stripes = 1;
	data = malloc((size_t)(stripes * k) * CHUNK);
	parity = malloc((size_t)m * CHUNK);
	if (!data || !parity)
		return 1;
	for (s = 0; s < stripes * k * CHUNK; s++)
		data[s] = (uint8_t)(s * 2654435761u >> 13);
	t0 = now_ns();
	for (s = 0; s < stripes; s++) {
		for (i = 0; i < k; i++)
			d[i] = data + (s * k + (uint64_t)i) * CHUNK;
		for (i = 0; i < m; i++)
			p[i] = parity + (uint64_t)i * CHUNK;
		ec_encode(ec, d, p, CHUNK);
	}
	t1 = now_ns();
	printf("ec %d+%d: %llu bytes in %llu ns\n", k, m,
	       (unsigned long long)(stripes * k * CHUNK),
	       (unsigned long long)(t1 - t0));
	ec_free(ec);
	free(data);
	free(parity);
	return 0;
}
