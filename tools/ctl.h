/*
 * ctl.h - what the ckptctl command files share: the invocation context, the
 * one-line error helpers and the command entry points.
 *
 * ckptctl is an ordinary user of include/ckpt.h; nothing here reaches into
 * client/ or server/.  A command function takes the command's own argv
 * (argv[0] is the command name) and returns the process exit status:
 * 0 success, 1 failure (one line on stderr already printed), 2 usage error.
 * Helpers below the commands return 0 or -errno, as everywhere else.
 */
#ifndef CKPT_CTL_H
#define CKPT_CTL_H

#include <stdint.h>
#include <time.h>

#include "ckpt.h"

#define CTL_EXIT_OK    0
#define CTL_EXIT_FAIL  1
#define CTL_EXIT_USAGE 2

/* Staging asked for by connections that do not write ($CKPT_STAGING, set by
 * main() unless the user set it): room for 4 MiB read pieces, and no
 * full-size lease taken from trainers.  ckptd grants as little as 4 MiB. */
#define CTL_LEASE "8M"

/* One ckptctl invocation.  main() owns it; commands borrow it. */
struct ctl {
	const char *socket;     /* NULL: $CKPT_SOCKET or CKPT_DEFAULT_SOCKET */
	int json;               /* --json: machine-readable output on stdout */
	struct ckpt_client *c;  /* set by ctl_connect(), closed by main() */
	char socket_buf[512];   /* storage for a socket read from -c FILE */
};

/* Connect ctl->c unless already connected.  Prints the error line itself;
 * returns 0 or the negative error. */
int ctl_connect(struct ctl *ctl);
/* The socket path as the user would name it in a message. */
const char *ctl_socket_name(const struct ctl *ctl);

/* Print "ckptctl: <what>: <ckpt_strerror(err)>" on stderr; returns
 * CTL_EXIT_FAIL so that a command can `return ctl_fail(...)`. */
int ctl_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print "ckptctl: <what>" (no error code) on stderr; returns CTL_EXIT_FAIL. */
int ctl_failx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "ckptctl: <what>" and a hint to run --help; returns CTL_EXIT_USAGE. */
int ctl_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Long options every command accepts; put CTL_COMMON_OPTS in each command's
 * struct option table and handle CTL_OPT_JSON and 'h' in its switch. */
#define CTL_OPT_JSON 0x100
#define CTL_COMMON_OPTS                                    \
	{ "json", no_argument, NULL, CTL_OPT_JSON },       \
	{ "help", no_argument, NULL, 'h' }
/* Parse a command that has only the common options (--json, --help).
 * Returns -1 to go on, or an exit status. */
int plain_args(struct ctl *ctl, int argc, char **argv);
/* The same for a command that takes --timeout S too (into *timeout_ms,
 * left as it was when not given). */
int timeout_args(struct ctl *ctl, int argc, char **argv, int *timeout_ms);
/* In a command's getopt switch, the common options: opt (what
 * getopt_long() returned) handled, -1 to go on; or an exit status (help
 * printed, or a usage error for command cmd). */
int ctl_common_opt(struct ctl *ctl, int opt, const char *cmd);
/* Reset getopt_long() before a command parses its own argv. */
void ctl_opt_reset(void);
/* Parse "--timeout S" (seconds, fractions allowed) into milliseconds.  0 or
 * -EINVAL. */
int ctl_parse_timeout(const char *s, int *ms);
/*
 * Open the directory that will hold path's last component (path relative
 * to rootfd), one component at a time and never following a symlink;
 * with create, the missing directories are made (0755, each fsync'd into
 * its parent).  On success *dfd is an fd the caller closes (never rootfd
 * itself) and *base points into path.  0 or -errno (-ENAMETOOLONG for a
 * component over 255 bytes).
 */
int ctl_open_parent(int rootfd, const char *path, int create, int *dfd,
		    const char **base);
/* Print the full usage text on stdout; returns CTL_EXIT_OK. */
int ctl_help(void);

/* A version as a JSON object (ctl_cmds.c). */
struct jw;
void ctl_json_version(struct jw *w, const struct ckpt_version_info *v);

/* The node table of a cluster's status (ctl_nodes.c): printed on stdout
 * (0, or -ENOMEM), or as the "nodes" key and array of an open object. */
int ctl_nodes_text(const struct ckpt_node_info *nodes, int n);
void ctl_nodes_json(struct jw *w, const struct ckpt_node_info *nodes, int n);

/* The restore plan of a version (ctl_plan.c): its entries sorted by path. */
struct ctl_plan {
	struct ckpt_plan_entry *e;  /* owned */
	int n;
};
/* ckpt_plan() into *p, sorted.  0 or -errno (p empty). */
int ctl_plan_load(struct ckpt_client *c, const char *job, const char *version,
		  struct ctl_plan *p);
void ctl_plan_release(struct ctl_plan *p);
/* The entry of path, or NULL. */
const struct ckpt_plan_entry *ctl_plan_find(const struct ctl_plan *p,
					    const char *path);
/* Files (of node part's part; NULL: all) no source can serve. */
int ctl_plan_lost(const struct ctl_plan *p, const char *part);
/* Name those files on stderr (the first ten), with why. */
void ctl_plan_report_lost(const struct ctl_plan *p, const char *part,
			  const char *job, const char *version);
/* restore --plan: the plan as a table (or --json) on stdout; returns the
 * exit status (1 when a file is lost). */
int ctl_plan_print(struct ctl *ctl, const char *job, const char *version,
		   const struct ctl_plan *p, const char *part);
/* The committed versions of job newer than chosen that latest passed over
 * because a file of theirs is lost: reported on stderr; their count. */
int ctl_plan_passed_over(struct ckpt_client *c, const char *job,
			 const char *chosen);

/* Commands (ctl_cmds.c, ctl_wait.c, ctl_read.c, bench.c). */
int cmd_status(struct ctl *ctl, int argc, char **argv);
int cmd_ls(struct ctl *ctl, int argc, char **argv);
int cmd_wait(struct ctl *ctl, int argc, char **argv);
int cmd_rm(struct ctl *ctl, int argc, char **argv);
int cmd_commit(struct ctl *ctl, int argc, char **argv);
int cmd_drain(struct ctl *ctl, int argc, char **argv);
int cmd_import(struct ctl *ctl, int argc, char **argv);
int cmd_verify(struct ctl *ctl, int argc, char **argv);
int cmd_restore(struct ctl *ctl, int argc, char **argv);
int cmd_bench(struct ctl *ctl, int argc, char **argv);
int cmd_rebuild(struct ctl *ctl, int argc, char **argv);

/* Monotonic and wall clocks in nanoseconds. */
static inline uint64_t ctl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ctl_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ckpt_stat_version2() with this header's whole struct: 0 or -errno. */
static inline int ctl_stat_version(struct ckpt_client *c, const char *job,
				   const char *version,
				   struct ckpt_version_info *vi)
{
	int ret = ckpt_stat_version2(c, job, version, vi, sizeof(*vi));

	return ret < 0 ? ret : 0;
}

#endif
