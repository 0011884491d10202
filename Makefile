# ckpt - one non-recursive Makefile.
#
#   make                    build/ckptd build/ckptctl build/libckpt.{so,a}
#   make test               deps + build + unit and integration tests
#   make SANITIZE=address,undefined test
#   make check-tsan         the threaded tests under ThreadSanitizer (in check)
#   make demo               single-node end-to-end run with built-in defaults
#   make bench              benchmark (not a test)
#   make soak               the crash-loop test at length (SOAK_ROUNDS kills)
#   make install PREFIX=/usr/local DESTDIR=   (every path below honours both)
#   make deps               install the Debian packages we build with
#
# With SANITIZE set, everything builds into build/san so that the plain and
# sanitizer builds never mix objects.

CC       ?= cc
PREFIX   ?= /usr/local
VERSION  := 1.0
# Install locations.  mount(8) looks for its helpers in /sbin only, so an
# install outside /usr (PREFIX=/usr/local) puts mount.ckptfs in
# $(PREFIX)/sbin, where mount(8) will not find it: link it into /sbin, or set
# SBINDIR=/sbin.  (On Debian /sbin is /usr/sbin, so PREFIX=/usr just works.)
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
DOCDIR     ?= $(DATADIR)/doc/ckpt
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR    ?= $(PREFIX)/lib/systemd/system
# Debian's /usr/bin/python3 looks in /usr/lib/python3/dist-packages and, for
# local installs, /usr/local/lib/python3.X/dist-packages (X its minor
# version): not /usr/local/lib/python3/dist-packages.
PYVER       = $(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR  ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3,$(PREFIX)/lib/python$(or $(PYVER),3))/dist-packages
WERROR   ?= -Werror
SANITIZE ?=
PKGS     := liburing fuse3 libzstd libisal cunit inih libmicrohttpd libsodium

ifeq ($(SANITIZE),)
BUILD    ?= build
SANFLAGS :=
else
BUILD    ?= build/san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs liburing libzstd libisal inih 2>/dev/null)
CUNIT_LIBS := $(shell pkg-config --libs cunit 2>/dev/null)
FUSE_LIBS  := $(shell pkg-config --libs fuse3 2>/dev/null)
# ckptd only: the /metrics endpoint (server/metrics.c).
MHD_LIBS   := $(shell pkg-config --libs libmicrohttpd 2>/dev/null)
# libsodium: the cluster's peer authentication (lib/peer.c), and the keyed
# hash of client-chosen names (lib/namehash.c); ckptd and ckptfs only.
SODIUM_LIBS:= $(shell pkg-config --libs libsodium 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
	    -Wmissing-prototypes -Wno-unused-parameter $(WERROR) \
	    -fPIC -D_GNU_SOURCE -Iinclude -Ilib $(PKG_CFLAGS) $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
LDLIBS   := $(PKG_LIBS) -lpthread

LIB_SRC    := $(wildcard lib/*.c)
# What only ckptd needs of lib/ (the cluster) stays out of libckpt.
CLIENT_LIB_SRC := $(filter-out lib/peer.c lib/place.c lib/nodes.c lib/extmap.c lib/hostlist.c lib/shardmeta.c lib/namelist.c lib/namehash.c lib/htab.c,$(LIB_SRC))
SERVER_SRC := $(shell find server -name '*.c' | sort)
CLIENT_SRC := $(wildcard client/*.c)
TOOLS_SRC  := $(wildcard tools/*.c)
FUSE_SRC   := $(shell find fuse -name '*.c' | sort)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
INTEG_SRC  := $(wildcard tests/integ/*.c)
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# ckptd's layers, lowest first (docs/design.md, "Server structure").  Each
# folder server/LAYER/ is compiled with the include paths of itself and the
# layers before it only, so an #include of a higher layer's header does not
# compile; server/ itself (main.c, ckptd.c, metrics.c) sees every layer.
# tools/layers.py checks the same rule on every file, headers included, with
# private headers (*_i.h) kept to their folder and no "../" in an #include.
SERVER_LAYERS := core store pfs drain cluster svc
layer_incs = $(foreach l,$(wordlist 1,$(1),$(SERVER_LAYERS)),-Iserver/$(l))
$(foreach i,1 2 3 4 5 6,$(eval INC_server/$(word $(i),$(SERVER_LAYERS)) := $(call layer_incs,$(i))))
INC_server     := $(call layer_incs,6)
# The unit tests of server modules see the layers as the top does.
INC_tests/unit := $(INC_server)

# Quiet by default; `make V=1` shows the commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

CORE_A   := $(BUILD)/libckptcore.a
CKPT_A   := $(BUILD)/libckpt.a
CKPT_SO  := $(BUILD)/libckpt.so
CKPTD    := $(BUILD)/ckptd
CKPTCTL  := $(BUILD)/ckptctl
CKPTFS   := $(if $(FUSE_SRC),$(BUILD)/ckptfs)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
INTEG_BIN:= $(patsubst tests/integ/%.c,$(BUILD)/tests/%,$(INTEG_SRC))

.PHONY: all deps test check check-unit check-integ demo demo-cluster bench install clean fuzz soak acceptance check-tsan check-some
.SECONDARY:
all: $(CKPTD) $(CKPTCTL) $(CKPT_SO) $(CKPT_A) $(CKPTFS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(INC_$(patsubst %/,%,$(dir $<))) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

$(CORE_A): $(call obj,$(LIB_SRC))
	@rm -f $@
	ar rcs $@ $^

# libckpt carries the lib/ objects it needs; the version script exports only
# the public ckpt_* names.
$(CKPT_A): $(call obj,$(CLIENT_SRC)) $(call obj,$(CLIENT_LIB_SRC))
	@rm -f $@
	ar rcs $@ $^

# The lib/ objects go in whole, not through the archive: ckpt_strerror() and
# the level names live there and no client object references them.
$(CKPT_SO): $(call obj,$(CLIENT_SRC)) $(call obj,$(CLIENT_LIB_SRC)) client/libckpt.map
	$(CC) -shared -Wl,-soname,libckpt.so.1 -Wl,--version-script=client/libckpt.map \
		$(LDFLAGS) -o $@ $(call obj,$(CLIENT_SRC)) $(call obj,$(CLIENT_LIB_SRC)) $(LDLIBS)
	@ln -sf libckpt.so $@.1

# The layering rule is checked as ckptd links: every #include, and every
# call between the objects (tools/layers.py); a breach fails the build.
$(CKPTD): $(call obj,$(SERVER_SRC)) $(CORE_A) tools/layers.py
	$(Q)python3 tools/layers.py --objs $(BUILD)/obj/server
	$(CC) $(LDFLAGS) -o $@ $(filter-out tools/layers.py,$^) $(MHD_LIBS) $(LDLIBS) $(SODIUM_LIBS)

$(CKPTCTL): $(call obj,$(TOOLS_SRC)) $(CKPT_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm

# ckptfs's four layers (conn, wb, ns, ops) are checked the same way as it
# links (tests/layers_fuse.sh carries fuse/'s layer table).
$(BUILD)/ckptfs: $(call obj,$(FUSE_SRC)) $(BUILD)/obj/lib/namehash.o $(CKPT_A) tests/layers_fuse.sh
	$(Q)tests/layers_fuse.sh $(BUILD)
	$(CC) $(LDFLAGS) -o $@ $(filter-out tests/layers_fuse.sh,$^) $(FUSE_LIBS) $(LDLIBS) $(SODIUM_LIBS)

# A FUSE file system that keeps no bytes: the ceiling row of
# tools/bench_fuse.sh (make bench), not a part of ckpt.
$(BUILD)/tools/nullfs: $(BUILD)/obj/tools/nullfs/nullfs.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS) -lpthread

# The protect ceiling: protection's data path with no service around it,
# the ceiling rows of tools/bench_protect.sh (make bench), not a part of ckpt.
$(BUILD)/tools/protect_ceiling: $(BUILD)/obj/tools/ceiling/ceiling.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS) $(SODIUM_LIBS)

# The unit tests of server code: the PFS layout, rebuilding chunks from
# records, the cache of PFS manifests, the target's mark, writer stalls, the shard store, and
# the loop's registered buffers.
$(BUILD)/tests/test_pfslayout: $(BUILD)/obj/tests/unit/test_pfslayout.o \
		$(BUILD)/obj/server/pfs/pfslayout.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS)

$(BUILD)/tests/test_pfsbuild: $(BUILD)/obj/tests/unit/test_pfsbuild.o \
		$(BUILD)/obj/server/pfs/pfsbuild.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS)

$(BUILD)/tests/test_pfscache: $(BUILD)/obj/tests/unit/test_pfscache.o \
		$(BUILD)/obj/server/pfs/pfscache.o $(BUILD)/obj/server/pfs/pfs.o \
		$(BUILD)/obj/server/pfs/pfslayout.o $(BUILD)/obj/server/pfs/pfspart.o \
		$(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS) -lpthread

$(BUILD)/tests/test_pfsmark: $(BUILD)/obj/tests/unit/test_pfsmark.o \
		$(BUILD)/obj/server/pfs/pfsmark.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS) -lpthread

$(BUILD)/tests/test_vstats: $(BUILD)/obj/tests/unit/test_vstats.o \
		$(BUILD)/obj/server/store/vstats.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS)

$(BUILD)/tests/test_loop: $(BUILD)/obj/tests/unit/test_loop.o \
		$(BUILD)/obj/server/core/loop.o $(BUILD)/obj/server/core/staging.o \
		$(BUILD)/obj/server/core/pool.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS) -lpthread

$(BUILD)/tests/test_pool: $(BUILD)/obj/tests/unit/test_pool.o \
		$(BUILD)/obj/server/core/loop.o $(BUILD)/obj/server/core/pool.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS)

$(BUILD)/tests/test_reccache: $(BUILD)/obj/tests/unit/test_reccache.o \
		$(BUILD)/obj/server/store/reccache.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS) -lpthread

$(BUILD)/tests/test_shardstore: $(BUILD)/obj/tests/unit/test_shardstore.o \
		$(BUILD)/obj/server/cluster/shardstore.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS)

# ckpt_raw is several files: its parts live in tests/integ/raw/.
RAW_SRC := $(wildcard tests/integ/raw/*.c)
$(BUILD)/tests/ckpt_raw: $(BUILD)/obj/tests/integ/ckpt_raw.o \
		$(call obj,$(RAW_SRC)) $(CKPT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/integ/%.o $(CKPT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# deps: install what is missing from Debian, once.  Skipped when every
# pkg-config module and tool is already present.
# python3-numpy, python3-h5py, python3-torch and rsync are real clients the
# FUSE and Python tests use; bc is for the benchmark scripts; curl scrapes the
# metrics; slurmctld, slurmd, slurm-client and munge run t_slurm.
DEB_PKGS := build-essential pkg-config python3 liburing-dev libfuse3-dev fuse3 \
	    libzstd-dev libisal-dev libcunit1-dev libinih-dev libsodium-dev \
	    libmicrohttpd-dev curl fio bc rsync \
	    python3-numpy python3-h5py python3-torch \
	    slurmctld slurmd slurm-client munge
deps:
	@if pkg-config --exists $(PKGS) && command -v fio >/dev/null && \
	    command -v fusermount3 >/dev/null && command -v rsync >/dev/null && \
	    command -v bc >/dev/null && command -v curl >/dev/null && \
	    command -v slurmd >/dev/null && command -v munged >/dev/null && \
	    /usr/bin/python3 -c 'import numpy, h5py, torch' 2>/dev/null; then \
		echo "deps: all present"; \
	else \
		echo "deps: installing $(DEB_PKGS)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq $(DEB_PKGS); \
	fi

check-unit: $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

check-integ: all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tests/run-integ.sh

# The threads under ThreadSanitizer, in a build of their own (build/tsan):
# the tests whose threads share a client, lent buffers, a mount's writers,
# or ckptd's worker pool.  A race report of any process fails the test
# (lib.sh).  TSan runs code several times slower: deadlines are scaled.
TSAN_TESTS := t_mtwrite t_multiwriter t_fuse_commit_race t_drain_parallel \
	      t_cluster_rebuild
check-tsan:
	@CKPT_SCALE=$${CKPT_SCALE:-3} $(MAKE) --no-print-directory \
		SANITIZE=thread BUILD=build/tsan TESTS="$(TSAN_TESTS)" check-some

# check-some TESTS="t_a t_b": those integration tests, in this build.
check-some: all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tests/run-integ.sh $(TESTS)

# check-tsan after the others, never beside them (make -j): a second build
# and its daemons would load the machine under the timing tests.
check: check-unit check-integ
	@$(MAKE) --no-print-directory check-tsan

# `make test` is what README.md and .ci/run call.  The recursive make picks up
# the pkg-config flags that exist only after deps has run.
test: deps
	@$(MAKE) --no-print-directory check

# acceptance: third-party suites (pjdfstest, libfuse passthrough for
# comparison) against ckptfs; not part of `make test`.  Sources: see
# tests/acceptance/run.sh (skipped with a line when not found).
acceptance: all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tests/acceptance/run.sh

demo: deps
	@$(MAKE) --no-print-directory all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tools/demo.sh

# demo-cluster: six ckptd nodes on 127.0.0.1-6, a rack lost, a spare.
demo-cluster: deps
	@$(MAKE) --no-print-directory all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tools/demo_cluster.sh

# Every script appends its rows of the performance table to BENCH_ROWS;
# bench_table.sh prints the table and writes it into docs/benchmarks.md.
BENCH_ROWS ?= $(BUILD)/bench-rows.txt
bench: all $(INTEG_BIN) $(BUILD)/tools/nullfs $(BUILD)/tools/protect_ceiling
	@rm -f $(BENCH_ROWS)
	@export CKPT_BUILD=$(BUILD) CKPT_BENCH_ROWS=$(abspath $(BENCH_ROWS)); \
	tools/bench.sh; \
	tools/bench_drain.sh; \
	if [ -x tools/bench_restore.sh ]; then tools/bench_restore.sh; fi; \
	tools/bench_fuse.sh; \
	tools/bench_protect.sh; \
	tools/bench_rebuild.sh; \
	tools/bench_table.sh $(abspath $(BENCH_ROWS)) docs/benchmarks.md

# soak: t_crashloop with many more SIGKILLs than `make test` runs.
SOAK_ROUNDS ?= 300
soak: all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) CKPT_CRASH_ROUNDS=$(SOAK_ROUNDS) CKPT_SCALE=$$(( $(SOAK_ROUNDS) / 20 + 1 )) \
		tests/run-integ.sh t_crashloop

fuzz: $(CORE_A)
	@tests/fuzz/run.sh $(BUILD)

# Rewrites the paths the installed files name (/usr/local, /etc/ckpt) to
# the ones this install uses.
INSTALL_SED := sed -e 's|/usr/local/bin|$(BINDIR)|g' \
	-e 's|/usr/local/share/doc/ckpt|$(DOCDIR)|g' \
	-e 's|/etc/ckpt/|$(SYSCONFDIR)/ckpt/|g'

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(SYSCONFDIR)/ckpt $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(DATADIR)/ckpt/slurm $(DESTDIR)$(DATADIR)/ckpt/grafana \
		$(DESTDIR)$(PYTHONDIR)/ckpt
	install -m 755 $(CKPTD) $(CKPTCTL) $(CKPTFS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(CKPT_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(CKPT_SO) $(DESTDIR)$(LIBDIR)/libckpt.so.1
	ln -sf libckpt.so.1 $(DESTDIR)$(LIBDIR)/libckpt.so
	install -m 644 include/ckpt.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		config/ckpt.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/ckpt.pc
	install -m 644 config/ckptd.conf.example README.md $(filter-out docs/benchmarks.md,$(wildcard docs/*.md)) $(DESTDIR)$(DOCDIR)/
	@if [ ! -e $(DESTDIR)$(SYSCONFDIR)/ckpt/ckptd.conf ]; then \
		echo "install config/ckptd.conf.example -> $(SYSCONFDIR)/ckpt/ckptd.conf"; \
		install -m 644 config/ckptd.conf.example $(DESTDIR)$(SYSCONFDIR)/ckpt/ckptd.conf; \
	fi
	for u in ckptd.service ckptfs@.service ckpt.mount; do \
		$(INSTALL_SED) config/$$u >$(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -m 755 config/slurm/prolog.sh config/slurm/epilog.sh $(DESTDIR)$(DATADIR)/ckpt/slurm/
	$(INSTALL_SED) config/slurm/ckpt-slurm-common.sh >$(DESTDIR)$(DATADIR)/ckpt/slurm/ckpt-slurm-common.sh
	$(INSTALL_SED) config/slurm/ckpt-slurm.conf >$(DESTDIR)$(DATADIR)/ckpt/slurm/ckpt-slurm.conf
	install -m 644 config/grafana-ckpt.json $(DESTDIR)$(DATADIR)/ckpt/grafana/
	install -m 644 python/ckpt/*.py $(DESTDIR)$(PYTHONDIR)/ckpt/
	sed 's|^_INSTALLED = .*|_INSTALLED = "$(LIBDIR)/libckpt.so.1"|' python/ckpt/_lib.py \
		>$(DESTDIR)$(PYTHONDIR)/ckpt/_lib.py
	@if [ -n "$(CKPTFS)" ]; then \
		install -d $(DESTDIR)$(SBINDIR) && \
		sed 's|^installed=.*|installed=$(BINDIR)/ckptfs|' fuse/mount.ckptfs \
			>$(DESTDIR)$(SBINDIR)/mount.fuse.ckptfs && \
		chmod 755 $(DESTDIR)$(SBINDIR)/mount.fuse.ckptfs && \
		ln -sf mount.fuse.ckptfs $(DESTDIR)$(SBINDIR)/mount.ckptfs; \
	fi

clean:
	rm -rf build
