/*
 * names.c - validation of job, version and file-path names.
 *
 * Names arrive from clients, manifests and FUSE and end up as parts of local
 * and PFS paths.  The rules are POSIX's for a path name and no narrower: a
 * component is 1..255 bytes of anything but '/' and NUL (spaces, quotes,
 * control bytes, UTF-8 or not), never "." or "..", and components are joined
 * by single '/'.  No leading or trailing '/', no empty component: a valid
 * name can never climb out of the directory it is joined to, which is all a
 * path built from it needs (server/pfs/pfslayout.c relies on exactly that and
 * escapes nothing).  Printing a name is the printer's business: ckptctl
 * escapes bytes a terminal or JSON cannot take.
 */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "ckpt.h"
#include "names.h"

#define NAME_COMPONENT_MAX 255

/*
 * Check s as components separated by '/'; allow_slash false admits exactly
 * one component.  The total length must be 1..max bytes.  toolong is what
 * a name too long (in all, or one component) gets.
 */
static int name_check(const char *s, size_t max, bool allow_slash,
		      int toolong)
{
	size_t i, start = 0, n;

	if (!s)
		return -CKPT_EBADNAME;
	n = strnlen(s, max + 1);
	if (n == 0)
		return -CKPT_EBADNAME;
	if (n > max)
		return toolong;
	for (i = 0; i <= n; i++) {
		size_t clen = i - start;

		if (i < n && s[i] != '/')
			continue;
		if (i < n && !allow_slash)
			return -CKPT_EBADNAME;
		/* s[i] ends a component: it must be non-empty, short, and not
		 * "." or "..". */
		if (clen == 0)
			return -CKPT_EBADNAME;
		if (clen > NAME_COMPONENT_MAX)
			return toolong;
		if (s[start] == '.' && (clen == 1 ||
					(clen == 2 && s[start + 1] == '.')))
			return -CKPT_EBADNAME;
		start = i + 1;
	}
	return 0;
}

int name_check_job(const char *job)
{
	return name_check(job, CKPT_JOB_MAX, true, -CKPT_EBADNAME);
}

int name_check_version(const char *version)
{
	return name_check(version, CKPT_VERSION_MAX, false, -CKPT_EBADNAME);
}

int name_check_path(const char *path)
{
	return name_check(path, CKPT_PATH_MAX2, true, -ENAMETOOLONG);
}

int name_check_node(const char *s)
{
	size_t i, n = strnlen(s, 64);

	if (!n || n > 63 || !strcmp(s, ".") || !strcmp(s, ".."))
		return -CKPT_EBADNAME;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return -CKPT_EBADNAME;
	return 0;
}

int name_utf8_len(const unsigned char *s)
{
	int n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}
