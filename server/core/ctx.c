/*
 * ctx.c - what the daemon's context (ctx.h) offers every layer: the clock
 * and this node's name as the configuration gives it.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctx.h"

uint64_t ckptd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ckptd_conf_self(const struct conf *conf, char *buf, size_t cap)
{
	char host[256];

	buf[0] = 0;
	if (!conf->cluster_nodes.n)
		return;
	if (conf->cluster_node[0]) {
		snprintf(buf, cap, "%s", conf->cluster_node);
		return;
	}
	/* Read whole, then cut at the first dot, as cluster_open() names
	 * this node: a host name longer than cap must not come out "". */
	if (gethostname(host, sizeof(host)) < 0)
		host[0] = 0;
	host[sizeof(host) - 1] = 0;
	host[strcspn(host, ".")] = 0;
	snprintf(buf, cap, "%s", host);
}
