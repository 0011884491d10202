/*
 * test_shardmeta.c - the record of a held shard: round trips, the layout
 * against an encoder written here from the header's description, every
 * truncation and single-bit flip rejected, and each validation rule hit
 * with a record whose CRC is right so that only the rule can catch it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "codec.h"
#include "crc32c.h"
#include "shardmeta.h"

#define IMG_MAX 4096

static uint8_t sample_man[] = "a manifest, opaque here";
static uint32_t sample_crcs[3] = { 0x11111111, 0x22222222, 0x33333333 };

/* 4+2, shard 5, 8 KiB chunks: stripes of 32 KiB, 70000 bytes -> 3. */
static void sample(struct shard_meta *m)
{
	memset(m, 0, sizeof(*m));
	strcpy(m->owner, "node-07.rack_a");
	strcpy(m->job, "llama70b/run3");
	strcpy(m->version, "step-001200");
	m->uid = 1000;
	m->seq = 42;
	m->open_id = 0x0123456789abcdefull;
	m->k = 4;
	m->m = 2;
	m->shard = 5;
	m->chunk = 8192;
	m->stream_len = 70000;
	m->nstripes = 3;
	m->crcs = sample_crcs;
	m->man = sample_man;
	m->manlen = sizeof(sample_man);
}

/* The layout as shardmeta.h describes it, with no checks: records that
 * shardmeta_encode() would refuse. */
static size_t raw_encode(const struct shard_meta *m, uint8_t *img)
{
	struct enc e;
	uint64_t i;
	long n;

	enc_init(&e, img, IMG_MAX);
	enc_u64(&e, SHARDMETA_MAGIC);
	enc_u32(&e, SHARDMETA_FORMAT);
	enc_u32(&e, 0);
	enc_str(&e, m->owner);
	enc_str(&e, m->job);
	enc_str(&e, m->version);
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
	/* A manlen past sample_man's: the record is short of it. */
	enc_bytes(&e, m->man, m->manlen < sizeof(sample_man) ? m->manlen :
		  sizeof(sample_man));
	for (i = 0; i < m->nstripes && i < 3; i++)
		enc_u32(&e, m->crcs ? m->crcs[i] : 0);   /* sample_crcs: 3 */
	n = enc_seal(&e);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static int decode(const uint8_t *img, size_t len)
{
	struct shard_meta m;
	int ret = shardmeta_decode(img, len, &m);

	if (ret == 0)
		shardmeta_release(&m);
	else
		CU_ASSERT(!m.crcs && !m.man);
	return ret;
}

static void fix_crc(uint8_t *img, size_t len)
{
	put_le32(img + len - 4, crc32c(img, len - 4));
}

static void test_round_trip(void)
{
	uint8_t img[IMG_MAX], raw[IMG_MAX];
	struct shard_meta m, out;
	long n;

	sample(&m);
	n = shardmeta_encode(&m, img, sizeof(img));
	CU_ASSERT_EQUAL_FATAL(n, (long)shardmeta_size(&m));
	CU_ASSERT(memcmp(img, "CKPTSHD1", 8) == 0);
	/* The header's layout, byte for byte. */
	CU_ASSERT_EQUAL_FATAL(raw_encode(&m, raw), (size_t)n);
	CU_ASSERT(memcmp(img, raw, (size_t)n) == 0);

	CU_ASSERT_EQUAL_FATAL(shardmeta_decode(img, (size_t)n, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.owner, m.owner);
	CU_ASSERT_STRING_EQUAL(out.job, m.job);
	CU_ASSERT_STRING_EQUAL(out.version, m.version);
	CU_ASSERT_EQUAL(out.uid, m.uid);
	CU_ASSERT_EQUAL(out.seq, m.seq);
	CU_ASSERT_EQUAL(out.open_id, m.open_id);
	CU_ASSERT(out.k == 4 && out.m == 2 && out.shard == 5);
	CU_ASSERT_EQUAL(out.chunk, m.chunk);
	CU_ASSERT_EQUAL(out.stream_len, m.stream_len);
	CU_ASSERT_EQUAL_FATAL(out.nstripes, 3);
	CU_ASSERT(memcmp(out.crcs, sample_crcs, sizeof(sample_crcs)) == 0);
	CU_ASSERT_EQUAL_FATAL(out.manlen, m.manlen);
	CU_ASSERT(memcmp(out.man, m.man, m.manlen) == 0);
	shardmeta_release(&out);
	CU_ASSERT_PTR_NULL(out.crcs);
	CU_ASSERT_PTR_NULL(out.man);
	shardmeta_release(&out);                /* twice is harmless */

	/* An empty part: no stripes, no crcs. */
	m.stream_len = 0;
	m.nstripes = 0;
	m.crcs = NULL;
	n = shardmeta_encode(&m, img, sizeof(img));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL_FATAL(shardmeta_decode(img, (size_t)n, &out), 0);
	CU_ASSERT_EQUAL(out.nstripes, 0);
	CU_ASSERT_PTR_NULL(out.crcs);
	shardmeta_release(&out);

	/* Exactly one stripe's worth, and the widest code. */
	sample(&m);
	m.k = 31;
	m.m = 1;
	m.shard = 31;
	m.chunk = 4u << 20;
	m.stream_len = 31ull * (4u << 20);
	m.nstripes = 1;
	n = shardmeta_encode(&m, img, sizeof(img));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(decode(img, (size_t)n), 0);
}

static void test_damage(void)
{
	uint8_t img[IMG_MAX];
	struct shard_meta m;
	size_t n, i, bit;

	sample(&m);
	n = (size_t)shardmeta_encode(&m, img, sizeof(img));
	for (i = 0; i < n; i++)
		CU_ASSERT(decode(img, i) < 0);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit++) {
			img[i] ^= (uint8_t)(1u << bit);
			CU_ASSERT(decode(img, n) < 0);
			img[i] ^= (uint8_t)(1u << bit);
		}
	}
	CU_ASSERT_EQUAL(decode(img, n), 0);

	img[0] ^= 1;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EBADMAGIC);
	img[0] ^= 1;
	put_le32(img + 8, SHARDMETA_FORMAT + 1);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EVERSION);
	put_le32(img + 8, SHARDMETA_FORMAT);
	put_le32(img + 12, 1);                  /* flags */
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EVERSION);
	put_le32(img + 12, 0);
	img[n - 1] ^= 0x80;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_ECORRUPT);
}

/* Encode m raw and decode it: what decode says. */
static int raw_decode(const struct shard_meta *m)
{
	uint8_t img[IMG_MAX];

	return decode(img, raw_encode(m, img));
}

static void test_fields(void)
{
	struct shard_meta m;

	sample(&m);
	CU_ASSERT_EQUAL(raw_decode(&m), 0);
#define EXPECT(field, value, err) do {					\
		sample(&m);						\
		m.field = (value);					\
		CU_ASSERT_EQUAL(raw_decode(&m), (err));			\
	} while (0)
	EXPECT(k, 0, -CKPT_EPROTO);
	EXPECT(m, 0, -CKPT_EPROTO);
	EXPECT(m, 29, -CKPT_EPROTO);            /* k + m = 33 */
	EXPECT(k, 0xfffffffe, -CKPT_EPROTO);    /* k + m wraps */
	EXPECT(shard, 0, -CKPT_EPROTO);
	EXPECT(shard, 6, -CKPT_EPROTO);         /* = k + m */
	EXPECT(chunk, 0, -CKPT_EPROTO);
	EXPECT(chunk, 4095, -CKPT_EPROTO);
	EXPECT(chunk, 8192 + 512, -CKPT_EPROTO);
	EXPECT(chunk, (4u << 20) + 4096, -CKPT_EPROTO);
	EXPECT(nstripes, 2, -CKPT_EPROTO);      /* not ceil(stream / stripe) */
	EXPECT(nstripes, 4, -CKPT_EPROTO);
	EXPECT(stream_len, 65536, -CKPT_EPROTO); /* exactly 2 stripes */
	EXPECT(stream_len, 0, -CKPT_EPROTO);
	EXPECT(manlen, 0, -CKPT_EPROTO);
	EXPECT(manlen, 4000, -CKPT_EPROTO);     /* more than the record */
	EXPECT(manlen, (16u << 20) + 1, -CKPT_EPROTO);
	EXPECT(owner[0], '\0', -CKPT_EBADNAME);
	EXPECT(job[0], '\0', -CKPT_EBADNAME);
	EXPECT(version[0], '\0', -CKPT_EBADNAME);
	EXPECT(owner[4], '/', -CKPT_EBADNAME);
	EXPECT(owner[4], ' ', -CKPT_EBADNAME);
	EXPECT(version[4], '/', -CKPT_EBADNAME);
#undef EXPECT
	sample(&m);
	strcpy(m.owner, "..");
	CU_ASSERT_EQUAL(raw_decode(&m), -CKPT_EBADNAME);
	strcpy(m.owner, ".");
	CU_ASSERT_EQUAL(raw_decode(&m), -CKPT_EBADNAME);
	strcpy(m.owner, "...");                 /* a plain name */
	CU_ASSERT_EQUAL(raw_decode(&m), 0);
	sample(&m);
	strcpy(m.job, "a//b");
	CU_ASSERT_EQUAL(raw_decode(&m), -CKPT_EBADNAME);
	strcpy(m.job, "a/../b");
	CU_ASSERT_EQUAL(raw_decode(&m), -CKPT_EBADNAME);

	/* A stream so long that nstripes * chunk would not be a file size
	 * (nor would the crcs fit the record). */
	sample(&m);
	m.k = 1;
	m.chunk = 4096;
	m.stream_len = UINT64_MAX;
	m.nstripes = UINT64_MAX / 4096 + 1;
	CU_ASSERT_EQUAL(raw_decode(&m), -CKPT_EPROTO);
}

/* Crcs present but fewer or more than nstripes, and trailing bytes. */
static void test_lengths(void)
{
	uint8_t img[IMG_MAX];
	struct shard_meta m;
	size_t n;

	sample(&m);
	n = raw_encode(&m, img);
	/* Drop the last crc: one stripe short. */
	memmove(img + n - 8, img + n - 4, 4);
	fix_crc(img, n - 4);
	CU_ASSERT_EQUAL(decode(img, n - 4), -CKPT_EPROTO);
	/* One byte too many. */
	n = raw_encode(&m, img);
	img[n] = 0;
	fix_crc(img, n + 1);
	CU_ASSERT_EQUAL(decode(img, n + 1), -CKPT_EPROTO);
}

static void test_encode(void)
{
	uint8_t img[IMG_MAX];
	struct shard_meta m;
	size_t n;

	sample(&m);
	CU_ASSERT_EQUAL(shardmeta_check(&m), 0);
	n = shardmeta_size(&m);
	CU_ASSERT_EQUAL(shardmeta_encode(&m, img, n - 1), -EMSGSIZE);
	CU_ASSERT_EQUAL(shardmeta_encode(&m, img, n), (long)n);

	m.crcs = NULL;                          /* nstripes 3 */
	CU_ASSERT_EQUAL(shardmeta_check(&m), 0);
	CU_ASSERT_EQUAL(shardmeta_encode(&m, img, sizeof(img)), -EINVAL);
	sample(&m);
	m.man = NULL;
	CU_ASSERT_EQUAL(shardmeta_check(&m), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(shardmeta_encode(&m, img, sizeof(img)), -EINVAL);
	sample(&m);
	m.shard = 0;
	CU_ASSERT_EQUAL(shardmeta_encode(&m, img, sizeof(img)), -EINVAL);
	sample(&m);
	strcpy(m.owner, "..");
	CU_ASSERT_EQUAL(shardmeta_check(&m), -CKPT_EBADNAME);
	CU_ASSERT_EQUAL(shardmeta_encode(&m, img, sizeof(img)), -EINVAL);
	/* A name without its NUL is refused, not overrun. */
	sample(&m);
	memset(m.owner, 'a', sizeof(m.owner));
	CU_ASSERT_EQUAL(shardmeta_check(&m), -CKPT_EBADNAME);
	sample(&m);
	memset(m.version, 'a', sizeof(m.version));
	CU_ASSERT_EQUAL(shardmeta_check(&m), -CKPT_EBADNAME);
}

static void test_owner_names(void)
{
	char longest[PLACE_NAME_MAX + 2];

	CU_ASSERT(shardmeta_owner_ok("n1"));
	CU_ASSERT(shardmeta_owner_ok("node-1.example_org"));
	CU_ASSERT(shardmeta_owner_ok(".hidden"));
	CU_ASSERT(!shardmeta_owner_ok(""));
	CU_ASSERT(!shardmeta_owner_ok("."));
	CU_ASSERT(!shardmeta_owner_ok(".."));
	CU_ASSERT(!shardmeta_owner_ok("a/b"));
	CU_ASSERT(!shardmeta_owner_ok("../etc"));
	CU_ASSERT(!shardmeta_owner_ok("/abs"));
	CU_ASSERT(!shardmeta_owner_ok("a b"));
	CU_ASSERT(!shardmeta_owner_ok("caf\xc3\xa9"));
	memset(longest, 'x', sizeof(longest));
	longest[PLACE_NAME_MAX] = '\0';
	CU_ASSERT(shardmeta_owner_ok(longest));
	longest[PLACE_NAME_MAX] = 'x';
	longest[PLACE_NAME_MAX + 1] = '\0';
	CU_ASSERT(!shardmeta_owner_ok(longest));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "damage", test_damage },
		{ "fields", test_fields },
		{ "lengths", test_lengths },
		{ "encode", test_encode },
		{ "owner_names", test_owner_names },
		{ NULL, NULL }
	};

	return unit_run("shardmeta", tests);
}
