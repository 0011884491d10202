/*
 * main.c - ckptd: wiring only.  Parse the command line and the config, set
 * up logging and the fault seam, and run the daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ckptd.h"
#include "log.h"
#include "sys.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ckptd [-c FILE] [-o KEY=VALUE]... [--print-config]\n"
		"\n"
		"  -c, --config FILE   read FILE (INI); every key has a default\n"
		"  -o KEY=VALUE        override one key, e.g. -o staging=1G\n"
		"      --print-config  print the effective config and exit\n"
		"  -h, --help          this text\n"
		"\n"
		"Environment: CKPT_FAULT=op:N[+][:ERRNO],... fails the Nth system call\n"
		"(tests only; see lib/sys.h).\n");
}

static int print_conf_err(const struct conf_err *e)
{
	if (e->file[0])
		fprintf(stderr, "ckptd: %s: %s\n", e->file, e->msg);
	else
		fprintf(stderr, "ckptd: config: %s\n", e->msg);
	return 2;
}

/*
 * [ckptd] nice, before any thread exists (the threads inherit it: on Linux
 * the value is per thread).  ckptd's work during a burst (taking WRITEs,
 * the ingest checksum) runs on the trainers' cores; below them it takes
 * only what they leave, instead of preempting one writer of a burst and
 * not the others.  Never raises the priority: a ckptd started lower stays.
 */
static void lower_priority(uint32_t nice)
{
	int cur;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0);
	if ((cur == -1 && errno) || cur >= (int)nice)
		return;
	if (setpriority(PRIO_PROCESS, 0, (int)nice) < 0)
		log_printf(LOG_WARNING, "nice %u: %s", nice, strerror(errno));
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "print-config", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct conf conf;
	struct conf_err err;
	struct ckptd_main d;
	int opt, print = 0, ret;

	memset(&err, 0, sizeof(err));
	conf_defaults(&conf);
	while ((opt = getopt_long(argc, argv, "c:o:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (conf_load(&conf, optarg, &err) < 0)
				return print_conf_err(&err);
			break;
		case 'o':
			if (conf_set(&conf, optarg, &err) < 0)
				return print_conf_err(&err);
			break;
		case 'P':
			print = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (conf_finish(&conf, &err) < 0)
		return print_conf_err(&err);
	if (print) {
		conf_print(&conf, stdout);
		return 0;
	}
	log_set_level(log_level_parse(conf.log_level));
	log_set_sink(strcmp(conf.log, "syslog") ? log_sink_stderr
						: log_sink_syslog, NULL);
	if (sys_fault_init() < 0) {
		fprintf(stderr, "ckptd: CKPT_FAULT: malformed fault plan\n");
		return 2;
	}
	if (getenv("CKPT_FAULT") && *getenv("CKPT_FAULT"))
		log_printf(LOG_WARNING, "fault injection active: %s",
			   getenv("CKPT_FAULT"));
	lower_priority(conf.nice);
	ret = ckptd_open(&d, &conf);
	if (ret < 0)
		return 1;
	ret = ckptd_run(&d);
	ckptd_close(&d);
	return ret < 0 ? 1 : 0;
}
