/*
 * ckptctl.c - command-line front end of ckpt: global options, the usage
 * text, and dispatch to the commands.
 *
 * ckptctl talks to the node's ckptd only through include/ckpt.h, like any
 * outside user of the library.  This file wires things together: it finds
 * the socket (-s, or the [ckptd] section of a config file given with -c, or
 * the library's default), hands the rest of argv to one command function,
 * and closes the connection.  The commands live in ctl_cmds.c (status,
 * ls), ctl_wait.c, ctl_rm.c, ctl_read.c (verify, restore) and bench.c,
 * among others; formatting helpers in
 * ctl_fmt.c, ctl_json.c and progress.c.
 *
 * Exit status: 0 success, 1 failure with one line on stderr, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ctl.h"

static const char usage_text[] =
"NAME\n"
"    ckptctl - inspect and control the ckpt checkpoint burst buffer\n"
"\n"
"SYNOPSIS\n"
"    ckptctl [-c FILE] [-s SOCKET] [--json] COMMAND [ARG...]\n"
"\n"
"DESCRIPTION\n"
"    ckptctl talks to the node's ckptd over its Unix socket.  It shows what\n"
"    the daemon holds, waits for a checkpoint version to reach a durability\n"
"    level, verifies and restores versions, removes them, and benchmarks the\n"
"    daemon against a plain memcpy and against fio on the same disk.\n"
"\n"
"OPTIONS\n"
"    -c, --config FILE\n"
"        Take the socket path from the [ckptd] section of a ckptd config\n"
"        file (socket=, else <dir>/ckptd.sock).\n"
"    -s, --socket PATH\n"
"        The daemon's socket.  Overrides -c.  Default: $CKPT_SOCKET, else\n"
"        " CKPT_DEFAULT_SOCKET ".\n"
"    --json\n"
"        Print the result as one JSON object on stdout (every command takes\n"
"        --json, before or after the command name).  Errors still go to\n"
"        stderr as one line.\n"
"    -h, --help\n"
"        Print this text.\n"
"\n"
"COMMANDS\n"
"    status\n"
"        Daemon state (staging, store, ingest rate, queue depth) and one row\n"
"        per version of every job: state, level, files, bytes, stored, age.\n"
"\n"
"    ls [JOB [VERSION]]\n"
"        Without arguments, the jobs with their number of versions and the\n"
"        newest version and its level.  With JOB, its versions.  With JOB and\n"
"        VERSION, its files with size and number of stored extents.\n"
"\n"
"    wait JOB VERSION LEVEL [--timeout SECONDS]\n"
"        Wait until the version reaches LEVEL.  On a terminal, shows the\n"
"        state, level and bytes stored while waiting.  Exit 0 when reached,\n"
"        1 on timeout or when the version failed.  Default: no timeout.\n"
"\n"
"    verify JOB VERSION\n"
"        Read every byte of every file of the version; ckptd checks each\n"
"        record's CRC32C.  Prints \"ok: N files, B bytes verified\", or one\n"
"        \"corrupt: PATH: ERROR\" line per damaged file and exits 1.\n"
"\n"
"    restore JOB [VERSION|latest] --to DIR [--part NODE | --all]\n"
"    restore JOB [VERSION|latest] --plan [--part NODE]\n"
"        Copy the version's files into DIR (created if needed).  \"latest\"\n"
"        (the default) is the newest version that is at least LOCAL and can\n"
"        be read whole; newer ones passed over are named on stderr.  Each\n"
"        file is read from the fastest source that has it (this node, the\n"
"        node holding it, decoded from its shards, the PFS), the next one\n"
"        when a source fails its CRC.  A version with a file no source can\n"
"        serve is refused before anything is written.  Each file is written\n"
"        under a temporary name, fsync'd and renamed into place; paths that\n"
"        would leave DIR are refused.  --part NODE restores only the files\n"
"        of NODE's part; --all (the default) every file of every part.\n"
"        --plan prints, per file, the source it would use and why, and\n"
"        reads nothing (exit 1 if a file is lost).\n"
"\n"
"    rm JOB VERSION [--timeout SECONDS]\n"
"        Delete the version from this node.  A drained version loses its\n"
"        local copy first and stays listed from the PFS; rm it again to\n"
"        remove it there.  While a committed version is busy (being\n"
"        sealed, protected or drained) rm waits, up to 300 s by default\n"
"        (--timeout 0: fail at once with \"busy\"); an open version a\n"
"        writer holds fails at once.\n"
"\n"
"    drain --pause | --resume | --adopt-target | --now JOB VERSION\n"
"        Pause or resume the drain to the parallel file system, take its\n"
"        target as it is now (after \"lacks this node's mark\": a target\n"
"        moved on purpose, not a PFS that failed to mount), or drain one\n"
"        version next.\n"
"\n"
"    rebuild [--no-wait] [--timeout SECONDS]\n"
"        Rebuild this node's parts from the shards its peers hold (a node\n"
"        that replaces a lost one, under its name).  A node whose store is\n"
"        new does this by itself at start.  Shows the progress, then the\n"
"        parts rebuilt; exit 1 if some are unrecoverable (fewer than k\n"
"        shards left).\n"
"\n"
"    import JOB VERSION DIR\n"
"        Make a committed version of every file under DIR (a checkpoint\n"
"        written by any tool), and wait until it is LOCAL.\n"
"\n"
"    commit JOB VERSION\n"
"        Commit an open version for every writer that joined it (for\n"
"        programs writing through ckptfs that do not commit themselves).\n"
"\n"
"    bench [--mode all|writers|burst] [--dir DIR] [--procs N] [--size BYTES]\n"
"          [--job NAME] [--first memcpy|writes]\n"
"        Needs a running ckptd.  --mode all (the default) measures (a) the\n"
"        trainer stall of ckpt_write() against memcpy() of the same bytes\n"
"        (target <= 1.3x) and (b) the time for N writer processes of BYTES\n"
"        each to reach LOCAL against fio with io_uring and O_DIRECT writing\n"
"        the same amount into DIR (target >= 0.9 of fio's rate).  DIR\n"
"        defaults to <store>/../bench-fio; fio's files are deleted\n"
"        afterwards, and so are the benchmark's versions.  Defaults: N=8,\n"
"        BYTES=128M, NAME=bench.  --mode writers: N writers (4) of BYTES\n"
"        (256M) each memcpy their bytes into pre-faulted memory, all\n"
"        released at once, then ckpt_write() them, all released at once\n"
"        (--first writes: the other way round); it reports the median\n"
"        writers' ratio (target <= 1.2) and the slowest writer against the\n"
"        median (target <= 1.1).  --mode burst: (b) into recycled segments\n"
"        against fio's second pass over its files.\n"
"        Sizes take K, M, G suffixes (powers of 1024).\n"
"\n"
"LEVELS\n"
"    staged     all bytes are in ckptd's staging memory\n"
"    local      sealed and fsync'd on this node's store\n"
"    protected  erasure-coded across peer nodes\n"
"    drained    published on the parallel file system\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 failure (one line \"ckptctl: WHAT: ERROR\" on stderr),\n"
"    2 usage error.\n"
"\n"
"ENVIRONMENT\n"
"    CKPT_SOCKET   the socket when neither -s nor -c is given\n"
"    CKPT_STAGING  staging bytes each connection asks for (K, M, G).\n"
"                  Default: 8M, except for bench's writers, which take\n"
"                  ckptd's default lease like any trainer.\n"
"\n"
"EXAMPLES\n"
"    ckptctl status\n"
"    ckptctl ls llama70b/run3\n"
"    ckptctl wait llama70b/run3 step-001200 local --timeout 60\n"
"    ckptctl restore llama70b/run3 latest --to /scratch/restore\n"
"    ckptctl -c /etc/ckpt/ckptd.conf --json status | jq .daemon\n";

int ctl_help(void)
{
	fputs(usage_text, stdout);
	return CTL_EXIT_OK;
}

static void vfail(int err, const char *fmt, va_list ap)
{
	char what[1024];

	vsnprintf(what, sizeof(what), fmt, ap);
	fflush(stdout);
	if (err)
		fprintf(stderr, "ckptctl: %s: %s\n", what, ckpt_strerror(err));
	else
		fprintf(stderr, "ckptctl: %s\n", what);
}

int ctl_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(err ? err : -EIO, fmt, ap);
	va_end(ap);
	return CTL_EXIT_FAIL;
}

int ctl_failx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(0, fmt, ap);
	va_end(ap);
	return CTL_EXIT_FAIL;
}

int ctl_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(0, fmt, ap);
	va_end(ap);
	fputs("Try 'ckptctl --help'.\n", stderr);
	return CTL_EXIT_USAGE;
}

void ctl_opt_reset(void)
{
	optind = 0; /* glibc: 0 re-initialises, including argv permutation */
	opterr = 1;
}

const char *ctl_socket_name(const struct ctl *ctl)
{
	const char *env = getenv("CKPT_SOCKET");

	if (ctl->socket)
		return ctl->socket;
	return env && *env ? env : CKPT_DEFAULT_SOCKET;
}

int ctl_connect(struct ctl *ctl)
{
	int err;

	if (ctl->c)
		return 0;
	err = ckpt_connect(ctl->socket, &ctl->c);
	if (err) {
		ctl->c = NULL;
		ctl_fail(err, "connect to %s", ctl_socket_name(ctl));
	}
	return err;
}

/* -c FILE: the socket ckptd would listen on with that config. */
static int socket_from_conf(struct ctl *ctl, const char *path)
{
	struct conf_err cerr = { .line = 0 };
	struct conf conf;
	int err;

	conf_defaults(&conf);
	err = conf_load(&conf, path, &cerr);
	if (!err)
		err = conf_finish(&conf, &cerr);
	if (err && cerr.msg[0]) /* the message carries "line N: " itself */
		return ctl_failx("%s: %s", path, cerr.msg);
	if (err)
		return ctl_fail(err, "%s", path);
	snprintf(ctl->socket_buf, sizeof(ctl->socket_buf), "%s", conf.socket);
	ctl->socket = ctl->socket_buf;
	return 0;
}

struct ctl_cmd {
	const char *name;
	int (*fn)(struct ctl *ctl, int argc, char **argv);
};

static const struct ctl_cmd ctl_cmds[] = {
	{ "status",  cmd_status },
	{ "ls",      cmd_ls },
	{ "wait",    cmd_wait },
	{ "verify",  cmd_verify },
	{ "restore", cmd_restore },
	{ "rm",      cmd_rm },
	{ "commit",  cmd_commit },
	{ "drain",   cmd_drain },
	{ "rebuild", cmd_rebuild },
	{ "import",  cmd_import },
	{ "bench",   cmd_bench },
	{ "help",    NULL },
};

static int dispatch(struct ctl *ctl, int argc, char **argv)
{
	size_t i;

	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++) {
		if (strcmp(argv[0], ctl_cmds[i].name))
			continue;
		if (!ctl_cmds[i].fn)
			return ctl_help();
		ctl_opt_reset();
		return ctl_cmds[i].fn(ctl, argc, argv);
	}
	return ctl_usage("unknown command '%s'", argv[0]);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		CTL_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *config = NULL, *socket = NULL;
	struct ctl ctl = { .socket = NULL };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+c:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 's':
			socket = optarg;
			break;
		case CTL_OPT_JSON:
			ctl.json = 1;
			break;
		case 'h':
			return ctl_help();
		default:
			return ctl_usage("bad option");
		}
	}
	if (optind >= argc)
		return ctl_usage("no command given");
	if (config && !socket && socket_from_conf(&ctl, config))
		return CTL_EXIT_FAIL;
	if (socket)
		ctl.socket = socket;
	/* Only bench writes; the other commands need staging just for reads,
	 * and must not wait behind trainers for a full-size lease. */
	if (!getenv("CKPT_STAGING") && strcmp(argv[optind], "bench") &&
	    strcmp(argv[optind], "import") &&
	    setenv("CKPT_STAGING", CTL_LEASE, 1))
		return ctl_fail(-errno, "setenv");

	rc = dispatch(&ctl, argc - optind, argv + optind);
	ckpt_disconnect(ctl.c);
	if (fflush(stdout) == EOF && rc == CTL_EXIT_OK)
		rc = ctl_fail(-errno, "write to stdout");
	return rc;
}
