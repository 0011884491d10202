/*
 * names.h - validation of job, version and file-path names.
 *
 * Every name that crosses a trust boundary (the socket, a manifest, a FUSE
 * path) goes through these before it is used.  The rules are in ckpt.h: a
 * component is 1..255 bytes of anything but '/' and NUL, never "." or "..".
 * A job is 1+ components joined by '/', a version exactly one, a path 1+
 * (of at most CKPT_PATH_MAX2 bytes).  Return 0, or -CKPT_EBADNAME; a path
 * too long, or with a component longer than 255 bytes, -ENAMETOOLONG.
 */
#ifndef CKPT_NAMES_H
#define CKPT_NAMES_H

int name_check_job(const char *job);
int name_check_version(const char *version);
int name_check_path(const char *path);
/* A cluster node's name (nodes.h's rule): 1..63 bytes of [A-Za-z0-9._-],
 * never "." or ".." (it names a directory of shards).  0 or -CKPT_EBADNAME. */
int name_check_node(const char *node);

/* Names are any bytes, but JSON and Prometheus labels are UTF-8: the
 * length of the valid UTF-8 sequence at s (1..4), or 0 where none starts
 * (a stray byte, an overlong form, a surrogate, past U+10FFFF).  s is
 * NUL-terminated. */
int name_utf8_len(const unsigned char *s);

#endif
