/*
 * shardmeta.c - the on-disk record of a shard held for a peer (see
 * shardmeta.h).
 *
 * A record is read back after crashes from a disk that may be damaged, so
 * decoding is a trust boundary, checked in manifest.c's order: magic,
 * format, CRC, then every field.  The sizes that drive allocation (manlen,
 * nstripes) are checked against the bytes actually present first, and
 * nstripes against stream_len, k and chunk, so that a caller can take
 * nstripes * chunk as the shard's size and index crcs[] by stripe without
 * further thought.  Encode runs the same field checks, so that nothing is
 * written that would not read back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "names.h"
#include "shardmeta.h"

/* magic, format, flags, the three string lengths, uid, seq, open_id, k, m,
 * shard, chunk, stream_len, nstripes, manlen, and the trailing crc. */
#define SM_FIXED (8 + 4 + 4 + 3 * 2 + 4 + 8 + 8 + 4 * 4 + 8 + 8 + 4 + 4)
/* The smallest record: one-byte names, a one-byte manifest. */
#define SM_MIN_LEN (SM_FIXED + 3 + 1)

int shardmeta_owner_ok(const char *s)
{
	return name_check_node(s) == 0;
}

/* k, m, shard, chunk and the stripe count that stream_len implies. */
static int geometry_ok(const struct shard_meta *m)
{
	uint64_t stripe;

	if (!m->k || !m->m || m->k > SHARDMETA_MAX_SHARDS ||
	    m->m > SHARDMETA_MAX_SHARDS - m->k)
		return 0;
	if (!m->shard || m->shard >= m->k + m->m)
		return 0;
	if (!m->chunk || m->chunk > PEER_MAX_SHARD ||
	    m->chunk % SHARDMETA_CHUNK_ALIGN)
		return 0;
	/* At most 32 * 4 MiB: no overflow. */
	stripe = (uint64_t)m->k * m->chunk;
	if (m->nstripes != m->stream_len / stripe + !!(m->stream_len % stripe))
		return 0;
	/* The shard's size, nstripes * chunk, must be a file size. */
	return m->nstripes <= (uint64_t)INT64_MAX / m->chunk;
}

int shardmeta_check(const struct shard_meta *m)
{
	if (strnlen(m->job, CKPT_JOB_MAX + 1) > CKPT_JOB_MAX ||
	    strnlen(m->version, CKPT_VERSION_MAX + 1) > CKPT_VERSION_MAX)
		return -CKPT_EBADNAME;
	if (!shardmeta_owner_ok(m->owner) || name_check_job(m->job) ||
	    name_check_version(m->version))
		return -CKPT_EBADNAME;
	if (!geometry_ok(m))
		return -CKPT_EPROTO;
	if (!m->manlen || m->manlen > PEER_MAX_MAN || !m->man)
		return -CKPT_EPROTO;
	return 0;
}

size_t shardmeta_size(const struct shard_meta *m)
{
	size_t n = SM_FIXED;

	n += strnlen(m->owner, PLACE_NAME_MAX + 1);
	n += strnlen(m->job, CKPT_JOB_MAX + 1);
	n += strnlen(m->version, CKPT_VERSION_MAX + 1);
	n += m->manlen;
	if (m->nstripes > (SIZE_MAX - n) / 4)
		return SIZE_MAX;
	return n + (size_t)m->nstripes * 4;
}

long shardmeta_encode(const struct shard_meta *m, void *buf, size_t cap)
{
	struct enc e;
	uint64_t i;

	if (shardmeta_check(m) || (m->nstripes && !m->crcs))
		return -EINVAL;
	enc_init(&e, buf, cap);
	enc_u64(&e, SHARDMETA_MAGIC);
	enc_u32(&e, SHARDMETA_FORMAT);
	enc_u32(&e, 0);                         /* flags */
	enc_strn(&e, m->owner, PLACE_NAME_MAX);
	enc_strn(&e, m->job, CKPT_JOB_MAX);
	enc_strn(&e, m->version, CKPT_VERSION_MAX);
	enc_u32(&e, m->uid);
	enc_u64(&e, m->seq);
	enc_u64(&e, m->open_id);
	enc_u32(&e, m->k);
	enc_u32(&e, m->m);
	enc_u32(&e, m->shard);
	enc_u32(&e, m->chunk);
	enc_u64(&e, m->stream_len);
	enc_u64(&e, m->nstripes);
	enc_u32(&e, m->manlen);
	enc_bytes(&e, m->man, m->manlen);
	for (i = 0; i < m->nstripes && !e.err; i++)
		enc_u32(&e, m->crcs[i]);
	return enc_seal(&e);
}

/* Everything but the manifest and crcs; refuses sizes the bytes left cannot
 * hold, so that they are safe to allocate by. */
static int sm_dec_head(struct dec *d, struct shard_meta *m)
{
	uint32_t flags;

	dec_u64(d);                             /* magic, checked */
	dec_u32(d);                             /* format, checked */
	flags = dec_u32(d);
	dec_str(d, m->owner, PLACE_NAME_MAX);
	dec_str(d, m->job, CKPT_JOB_MAX);
	dec_str(d, m->version, CKPT_VERSION_MAX);
	m->uid = dec_u32(d);
	m->seq = dec_u64(d);
	m->open_id = dec_u64(d);
	m->k = dec_u32(d);
	m->m = dec_u32(d);
	m->shard = dec_u32(d);
	m->chunk = dec_u32(d);
	m->stream_len = dec_u64(d);
	m->nstripes = dec_u64(d);
	m->manlen = dec_u32(d);
	if (d->err)
		return d->err;
	if (flags)
		return -CKPT_EVERSION;
	if (!shardmeta_owner_ok(m->owner) || name_check_job(m->job) ||
	    name_check_version(m->version))
		return -CKPT_EBADNAME;
	if (!geometry_ok(m) || !m->manlen || m->manlen > PEER_MAX_MAN)
		return -CKPT_EPROTO;
	if (m->manlen > dec_left(d) ||
	    m->nstripes != (dec_left(d) - m->manlen) / 4 ||
	    (dec_left(d) - m->manlen) % 4)
		return -CKPT_EPROTO;
	return 0;
}

/* The manifest bytes and the crcs, into allocations of their own. */
static int sm_dec_body(struct dec *d, struct shard_meta *m)
{
	uint64_t i;

	m->man = malloc(m->manlen);
	if (!m->man)
		return -ENOMEM;
	/* manlen <= dec_left(d), checked by sm_dec_head(). */
	memcpy(m->man, d->buf + d->pos, m->manlen);
	d->pos += m->manlen;
	if (!m->nstripes)
		return d->err;
	m->crcs = malloc(m->nstripes * sizeof(*m->crcs));
	if (!m->crcs)
		return -ENOMEM;
	for (i = 0; i < m->nstripes; i++)
		m->crcs[i] = dec_u32(d);
	return d->err;
}

int shardmeta_decode(const void *buf, size_t len, struct shard_meta *m)
{
	struct dec d;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = image_check(buf, len, SHARDMETA_MAGIC, SHARDMETA_FORMAT,
			  SM_MIN_LEN);
	if (ret)
		return ret;
	dec_init(&d, buf, len - 4);
	ret = sm_dec_head(&d, m);
	if (ret)
		goto out_release;
	ret = sm_dec_body(&d, m);
	if (ret)
		goto out_release;
	if (dec_left(&d)) {
		ret = -CKPT_EPROTO;
		goto out_release;
	}
	return 0;

out_release:
	shardmeta_release(m);
	memset(m, 0, sizeof(*m));
	return ret;
}

void shardmeta_release(struct shard_meta *m)
{
	free(m->crcs);
	free(m->man);
	m->crcs = NULL;
	m->man = NULL;
}
