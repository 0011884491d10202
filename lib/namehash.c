/*
 * namehash.c - a keyed hash of names (see namehash.h).
 */
#include <pthread.h>
#include <sodium.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "namehash.h"

static unsigned char key[crypto_shorthash_KEYBYTES];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* crypto_shorthash() is a pure function: it needs no sodium_init().  The
 * kernel's source blocks only before it is seeded at boot; should it fail
 * anyway, the key is the time and the pid, still not one a client sees. */
static void key_draw(void)
{
	struct timespec ts;
	uint64_t w[2];

	if (getrandom(key, sizeof(key), 0) == (ssize_t)sizeof(key))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w[0] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	w[1] = (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&ts;
	memcpy(key, w, sizeof(key) < sizeof(w) ? sizeof(key) : sizeof(w));
}

uint64_t name_hash64(const void *p, size_t len)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h;

	pthread_once(&key_once, key_draw);
	crypto_shorthash(out, p, len, key);
	memcpy(&h, out, sizeof(h));
	return h;
}

uint32_t name_hash(const char *s)
{
	return (uint32_t)name_hash64(s, strlen(s));
}
