/*
 * ckptfs.c - the FUSE mount of ckpt: options, setup, and the operation table.
 *
 *   ckptfs [-c FILE] [-s SOCKET] MOUNTPOINT [-f] [-d] [-o OPTION[,OPTION...]]
 *
 * ckptfs gives trainers a plain path: torch.save(state,
 * "/ckpt/myjob/step-100/model.pt") writes into ckptd's staging memory at
 * node-local burst-buffer speed, with ckpt's durability levels, and without
 * a line of new code.  It is a client of ckptd through libckpt only, the
 * same API any user has.  It is a libfuse3 high-level (path) file system,
 * multithreaded, in the manner of libfuse's example/passthrough*.c.
 *
 * Layout.  MOUNT/<job>/<version>/<file path...>.  The job is the first
 * `jobdepth` components (-o jobdepth=N, default 1), since ckpt job names may
 * hold '/': with jobdepth=2, MOUNT/llama70b/run3/step-100/model.pt is file
 * model.pt of version step-100 of job llama70b/run3.  Jobs with another
 * number of components are not shown.  Names follow ckpt's rules: each
 * component 1..255 bytes of [A-Za-z0-9._+-=@,], so creating "a b" is EINVAL.
 *
 * Writing a checkpoint.
 *   mkdir MOUNT/job                 remembered by the mount until the job
 *                                   has a version (ckptd has no empty jobs)
 *   mkdir MOUNT/job/VER             begins version VER, owned by the caller
 *   mkdir MOUNT/job/VER.tmp         begins version VER too, shown as VER.tmp
 *                                   until committed
 *   files and directories inside    create, write/pwrite anywhere (overwrite
 *                                   included), truncate, unlink, rename,
 *                                   mkdir, rmdir, as on any file system
 * Committing it (a version is a checkpoint only once committed):
 *   mv MOUNT/job/VER.tmp MOUNT/job/VER     the rename commits it
 *   touch MOUNT/job/VER/.commit            so does creating the marker at the
 *                                          version's root; it is not stored,
 *                                          and in a committed version
 *                                          VER/.commit exists (empty)
 *   -o autocommit=SECONDS                  commits a version once no file of
 *                                          it is open and nothing touched it
 *                                          for that long (0: off, default)
 *   ckptctl commit JOB VER                 commits it from outside; the mount
 *                                          follows
 * Close the version's files before committing it: a write after the commit
 * is EROFS.  After the commit the version is read-only: any change in it is
 * EROFS, and it shows mode 0500/0400.  A VER.tmp committed by its marker or
 * by autocommit shows as VER, and VER.tmp stays a hidden read-only alias of
 * it for the programs still working there.  Any other rename of a version
 * directory, and any rename between versions or jobs, is EXDEV (so mv
 * copies).  rmdir of an empty version this mount writes aborts it.  A
 * version being written by another client (the C API) can be read but not
 * changed here (EROFS).  An open file that is unlinked stays readable and
 * writable until closed, and is never part of the checkpoint.
 *
 * Reading.  Every version this node holds, committed or still open, is
 * readable; every byte is CRC-checked by ckptd, and damage is EIO, never bad
 * bytes.  Failed and incomplete versions are not shown.
 *
 * Ownership.  A job, its versions and files belong to the uid that made the
 * job (ckptfs begins each version for the calling uid with ckpt_begin_as),
 * and are private to it as in ckptd: directories 0700 and files 0600 while
 * written, 0500 and 0400 once committed.  Run as root, ckptfs mounts with
 * allow_other,default_permissions, so the kernel enforces those owners and
 * modes and another user gets EACCES (root may do anything, as in ckptd).
 * The root of the mount is mode 1777, so anyone can make a job; job names
 * are visible to all, their contents are not.  Modes, owners and times of
 * files, symbolic links, FIFOs, sockets and device nodes (metadata only) are
 * kept in the version (attr.c); chmod, chown and utime are EROFS in
 * committed versions; extended attributes in "user." (xattr.c).  Hard
 * links (ln) inside a version being written: both names are one file, with
 * one st_ino and st_nlink counting its names (nsops.c, tree.c); across
 * versions EXDEV, of a directory EPERM.
 *
 * Durability.  A write returns once its bytes are in ckptd's staging memory
 * (STAGED-like: it survives the trainer, not ckptd).  fsync (-o fsync=local,
 * the default) returns once the version's bytes are in ckptd's store; with
 * -o fsync=staged it only checks that they were handed over.  An
 * uncommitted version never survives a ckptd crash, by design: fsync before
 * commit protects against a crash of the trainer, and commit + LOCAL is what
 * survives a crash of ckptd (fsync in a committed version waits for LOCAL;
 * `ckptctl wait JOB VER local` too).  Errors of the background disk write
 * (ENOSPC, EIO) fail the version and come back from write, fsync, close or
 * the commit.  A clean unmount (fusermount3 -u) flushes every version still
 * open to ckptd and does not commit it; ckptd then aborts it as it does for
 * any client that leaves without committing (logged).
 *
 * Speed.  1 MiB FUSE writes (max_write), several worker threads, and
 * direct_io on files opened write-only: each write of 1 MiB is one copy
 * from the FUSE buffer into staging and never waits for the disk; smaller
 * contiguous writes (tar's 10 KiB) are gathered into 1 MiB first (wbuf.c).
 * A file opened for reading uses the page cache, so mmap works (shared
 * writable mappings too) while it is being written; committed versions are
 * immutable and keep their cache (keep_cache).  If ckptd restarts, ckptfs reconnects on the
 * next call; the versions it had open are lost (EIO) and committed ones are
 * readable again.
 *
 * Files, in four layers, each calling only down and each with one private
 * header that includes only the one below (conn_i.h says more;
 * tests/layers_fuse.sh checks it):
 *   operations (ops_i.h)  ckptfs.c (this: options, setup, operation
 *                         table), nsops.c (getattr, mkdir, rename, link,
 *                         ...), dir.c (readdir), io.c (open, read, write,
 *                         fsync, symlinks), xattr.c, inval.c (the kernel's
 *                         caches of a hard-linked file's other names),
 *                         closer.c (did the closing task die), hk.c
 *                         (autocommit and other housekeeping)
 *   namespace (ns_i.h)    vers.c (versions this mount writes: begin, commit,
 *                         unmount), tree.c (the in-memory namespace of a
 *                         version being written: names and the inodes they
 *                         share), attr.c, inomap.c, path.c (paths to ckpt
 *                         names), pend.c (job directories without a version
 *                         yet, aliases)
 *   write-behind (wb_i.h) wbuf.c (write-behind of small writes)
 *   connections (conn_i.h) conn.c (connections to ckptd), srv.c (what ckptd
 *                         says), log.c (log, errors, clock)
 * and mount.ckptfs (the mount(8) helper).  This file is the top: it wires
 * the layers at setup (fs->conn_ops = &ver_conn_ops).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "ops_i.h"
#include <fuse_lowlevel.h>   /* fuse_parse_cmdline */
#include "conf.h"

static const char usage_text[] =
"usage: ckptfs [-c FILE] [-s SOCKET] MOUNTPOINT [-f] [-d] [-o OPTIONS]\n"
"\n"
"Mount ckpt, the checkpoint burst buffer, at MOUNTPOINT:\n"
"MOUNTPOINT/<job>/<version>/<files>.  Commit a version by renaming\n"
"<version>.tmp to <version>, or by creating <version>/.commit.\n"
"\n"
"ckptfs options:\n"
"    -c FILE, -o config=FILE   take ckptd's socket from its config file\n"
"    -s SOCKET, -o socket=PATH ckptd's socket (default: $CKPT_SOCKET, else\n"
"                              " CKPT_DEFAULT_SOCKET ")\n"
"    -o autocommit=SECONDS     commit a version once all its files are\n"
"                              closed and it was idle that long (0: off)\n"
"    -o fsync=local|staged     what fsync waits for (default local: the\n"
"                              bytes are in ckptd's store)\n"
"    -o jobdepth=N             leading components that name the job\n"
"                              (default 1)\n"
"    -o nodes=N                in a cluster of ckptd nodes: the parts\n"
"                              (nodes) each version has (default:\n"
"                              $CKPT_NODES, else $SLURM_JOB_NUM_NODES,\n"
"                              else 1); see ckpt_begin2()\n"
"\n"
"general options:\n"
"    -f                        stay in the foreground\n"
"    -d, -o debug              FUSE debug output (implies -f)\n"
"    -o max_threads=N          most FUSE worker threads (libfuse default)\n"
"    -V, --version             print the version\n"
"    -o allow_other, -o default_permissions, ... the kernel's FUSE mount\n"
"                              options (see fuse(8))\n"
"\n"
"Through mount(8) and /etc/fstab: mount -t fuse.ckptfs SOCKET MOUNTPOINT\n"
"(see mount.ckptfs).\n";

struct fs_cli {
	char *config;
	char *socket;
	char *fsync;
	unsigned autocommit;
	unsigned jobdepth;
	unsigned nodes;
	int help;
};

#define CLI_OPT(t, p) { t, offsetof(struct fs_cli, p), 1 }
static const struct fuse_opt cli_opts[] = {
	CLI_OPT("-c %s", config),
	CLI_OPT("--config=%s", config),
	CLI_OPT("config=%s", config),
	CLI_OPT("-s %s", socket),
	CLI_OPT("--socket=%s", socket),
	CLI_OPT("socket=%s", socket),
	CLI_OPT("autocommit=%u", autocommit),
	CLI_OPT("fsync=%s", fsync),
	CLI_OPT("jobdepth=%u", jobdepth),
	CLI_OPT("nodes=%u", nodes),
	CLI_OPT("-h", help),
	CLI_OPT("--help", help),
	FUSE_OPT_END
};

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct ckptfs *fs = fuse_get_context()->private_data;
	int ret;

	/* st_ino is ours (nsops.c): the names of a hard-linked file show one,
	 * where libfuse would number each path. */
	cfg->use_ino = 1;
	cfg->nullpath_ok = 1;     /* every op on an open file uses its handle */
	/* An open file that is unlinked is renamed .fuse_hiddenXXXX by libfuse
	 * and removed at its last close (or at the commit: vers.c), so that it
	 * stays readable and writable as POSIX wants; the mirror takes it out
	 * of its directory (tree.c, hidden), which may then be removed.
	 * (hard_remove would make fstat of it ESTALE at once.) */
	cfg->hard_remove = 0;
	conn->max_write = FS_MAX_WRITE;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	ret = hk_start(fs);
	if (ret < 0)
		fs_log(FUSE_LOG_ERR, "housekeeping thread: %s",
		       ckpt_strerror(ret));
	return fs;
}

static void fs_destroy(void *data)
{
	struct ckptfs *fs = data;

	hk_stop(fs);
	ver_release_all(fs);
	conn_close_all(fs);
	alias_free_all(fs);
	inomap_free_all(fs);
	pend_free_all(fs);
}

static const struct fuse_operations fs_oper = {
	.init       = fs_init,
	.destroy    = fs_destroy,
	.getattr    = fs_getattr,
	.opendir    = fs_opendir,
	.readdir    = fs_readdir,
	.releasedir = fs_releasedir,
	.mkdir      = fs_mkdir,
	.rmdir      = fs_rmdir,
	.unlink     = fs_unlink,
	.rename     = fs_rename,
	.link       = fs_link,
	.chmod      = fs_chmod,
	.chown      = fs_chown,
	.utimens    = fs_utimens,
	.truncate   = fs_truncate,
	.create     = fs_create,
	.open       = fs_open,
	.read       = fs_read,
	.lseek      = fs_lseek,
	.write      = fs_write,
	.flush      = fs_flush,
	.release    = fs_release,
	.fsync      = fs_fsync,
	.fsyncdir   = fs_fsyncdir,
	.statfs     = fs_statfs,
	.fallocate  = fs_fallocate,
	.mknod      = fs_mknod,
	.symlink    = fs_symlink,
	.readlink   = fs_readlink,
	.setxattr   = fs_setxattr,
	.getxattr   = fs_getxattr,
	.listxattr  = fs_listxattr,
	.removexattr = fs_removexattr,
};

/* The socket: -s, else the config's (-c), else $CKPT_SOCKET, else the
 * default.  Resolved once, so a reconnect goes to the same place. */
static int resolve_socket(struct ckptfs *fs, const struct fs_cli *cli)
{
	struct conf_err cerr = { .line = 0 };
	const char *s = cli->socket;
	struct conf conf;
	int ret;

	if (!s && cli->config) {
		conf_defaults(&conf);
		ret = conf_load(&conf, cli->config, &cerr);
		if (ret == 0)
			ret = conf_finish(&conf, &cerr);
		if (ret < 0) {
			fprintf(stderr, "ckptfs: %s: %s\n", cli->config,
				cerr.msg[0] ? cerr.msg : ckpt_strerror(ret));
			return ret;
		}
		s = conf.socket;
		snprintf(fs->socket, sizeof(fs->socket), "%s", s);
		return 0;
	}
	if (!s)
		s = getenv("CKPT_SOCKET");
	if (!s || !*s)
		s = CKPT_DEFAULT_SOCKET;
	if (strlen(s) >= sizeof(fs->socket))
		return -ENAMETOOLONG;
	strcpy(fs->socket, s);
	return 0;
}

static int check_options(struct ckptfs *fs, const struct fs_cli *cli)
{
	if (cli->jobdepth < 1 || cli->jobdepth > FS_JOBDEPTH_MAX) {
		fprintf(stderr, "ckptfs: jobdepth must be 1..%d\n",
			FS_JOBDEPTH_MAX);
		return -EINVAL;
	}
	if (cli->fsync && strcmp(cli->fsync, "local") &&
	    strcmp(cli->fsync, "staged")) {
		fprintf(stderr, "ckptfs: fsync must be local or staged\n");
		return -EINVAL;
	}
	if (cli->nodes > CKPT_NODES_MAX) {
		fprintf(stderr, "ckptfs: nodes must be 1..%d\n", CKPT_NODES_MAX);
		return -EINVAL;
	}
	fs->jobdepth = cli->jobdepth;
	fs->nodes = cli->nodes;
	fs->autocommit = cli->autocommit;
	fs->fsync_staged = cli->fsync && !strcmp(cli->fsync, "staged");
	return resolve_socket(fs, cli);
}

/* Fail early, with one line, when ckptd is not there. */
static int check_ckptd(struct ckptfs *fs)
{
	struct ckpt_client *c;
	struct ckpt_status s;
	int ret;

	ret = ckpt_connect(fs->socket, &c);
	if (ret == 0) {
		ret = ckpt_status(c, &s);
		ckpt_disconnect(c);
	}
	if (ret < 0) {
		fprintf(stderr, "ckptfs: ckptd at %s: %s\n", fs->socket,
			ckpt_strerror(ret));
		return ret;
	}
	fs->ckptd_pid = s.pid;
	return 0;
}

static void syslog_sink(enum fuse_log_level level, const char *fmt,
			va_list ap)
{
	vsyslog(level, fmt, ap);
}

static struct ckptfs *fs_new(void)
{
	struct ckptfs *fs = calloc(1, sizeof(*fs));
	pthread_condattr_t attr;

	if (!fs)
		return NULL;
	pthread_mutex_init(&fs->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&fs->closed_cv, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&fs->connect_mu, NULL);
	pthread_mutex_init(&fs->begin_mu, NULL);
	fs_list_init(&fs->versions);
	fs_list_init(&fs->pending);
	fs_list_init(&fs->aliases);
	fs_list_init(&fs->inomaps);
	clock_gettime(CLOCK_REALTIME, &fs->started);
	fs->next_ino = FS_ROOT_INO;
	fs->conn_ops = &ver_conn_ops;   /* the connections ask the versions */
	return fs;
}

/* Mount options every ckptfs mount has; the user's come after and win. */
static int add_mount_opts(struct fuse_args *args)
{
	const char *opts = geteuid() == 0
		? "-ofsname=ckptfs,subtype=ckptfs,default_permissions,allow_other"
		: "-ofsname=ckptfs,subtype=ckptfs,default_permissions";

	return fuse_opt_insert_arg(args, 1, opts) ? -ENOMEM : 0;
}

/* Mount, serve until unmounted, and unmount.  Returns the exit status. */
static int serve(struct ckptfs *fs, struct fuse_args *args,
		 struct fuse_cmdline_opts *opts)
{
	struct fuse_loop_config *lc;
	struct fuse_session *se;
	struct fuse *fuse;
	int ret = 1;

	fuse = fuse_new(args, &fs_oper, sizeof(fs_oper), fs);
	if (!fuse)
		return 1;
	if (fuse_mount(fuse, opts->mountpoint))
		goto out_destroy;
	if (fuse_daemonize(opts->foreground))
		goto out_unmount;
	if (!opts->foreground) {
		openlog("ckptfs", LOG_PID, LOG_DAEMON);
		fuse_set_log_func(syslog_sink);
	}
	se = fuse_get_session(fuse);
	if (fuse_set_signal_handlers(se))
		goto out_unmount;
	lc = fuse_loop_cfg_create();
	if (!lc)
		goto out_signals;
	fuse_loop_cfg_set_clone_fd(lc, opts->clone_fd);
	/* Unset values are UINT_MAX, which libfuse 3.14 warns about. */
	if (opts->max_idle_threads <= 100000)
		fuse_loop_cfg_set_idle_threads(lc, opts->max_idle_threads);
	if (opts->max_threads && opts->max_threads <= 100000)
		fuse_loop_cfg_set_max_threads(lc, opts->max_threads);
	fs_log(FUSE_LOG_INFO, "mounted at %s: ckptd pid %llu at %s, jobdepth "
	       "%u, autocommit %us, fsync %s", opts->mountpoint,
	       (unsigned long long)fs->ckptd_pid, fs->socket, fs->jobdepth,
	       fs->autocommit, fs->fsync_staged ? "staged" : "local");
	ret = fuse_loop_mt(fuse, lc) ? 1 : 0;
	fuse_loop_cfg_destroy(lc);
out_signals:
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
	return ret;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { .mountpoint = NULL };
	struct fs_cli cli = { .jobdepth = 1 };
	struct ckptfs *fs;
	int ret = 1;

	fs = fs_new();
	if (!fs || fuse_opt_parse(&args, &cli, cli_opts, NULL))
		goto out_free;
	if (cli.help) {
		/* Not fuse_cmdline_help(): its -s is our socket.  Nor
		 * fuse_lib_help(): it lists the high-level API's modules
		 * (subdir, iconv), which a low-level file system has not. */
		fputs(usage_text, stdout);
		ret = 0;
		goto out_free;
	}
	if (add_mount_opts(&args) || fuse_parse_cmdline(&args, &opts))
		goto out_free;
	if (opts.show_version) {
		printf("ckptfs (libfuse %s)\n", fuse_pkgversion());
		ret = 0;
		goto out_free;
	}
	if (!opts.mountpoint) {
		fprintf(stderr, "%sckptfs: no mount point given\n", usage_text);
		ret = 2;
		goto out_free;
	}
	fs->foreground = opts.foreground;
	if (check_options(fs, &cli) || check_ckptd(fs))
		goto out_free;
	ret = serve(fs, &args, &opts);
out_free:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	free(cli.config);
	free(cli.socket);
	free(cli.fsync);
	free(fs);
	return ret;
}
