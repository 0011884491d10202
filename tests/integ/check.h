/*
 * check.h - the one assertion of the C clients in tests/integ: CHECK(cond,
 * fmt, ...) prints "<program>: <file>:<line>: <message>" on stderr when
 * cond is false and sets `failed`, which the client returns from main.
 * Each client includes it once; `failed` is that client's.
 */
#ifndef CKPT_TESTS_CHECK_H
#define CKPT_TESTS_CHECK_H

#include <errno.h>
#include <stdio.h>

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s: %s:%d: ", program_invocation_short_name, \
			__FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failed = 1; \
	} \
} while (0)

#endif
