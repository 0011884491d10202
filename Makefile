# ckpt - one non-recursive Makefile.
#
#   make                    build/ckptd build/ckptctl build/libckpt.{so,a}
#   make test               deps + build + unit and integration tests
#   make SANITIZE=address,undefined test
#   make demo               single-node end-to-end run with built-in defaults
#   make bench              benchmark (not a test)
#   make soak               the crash-loop test at length (SOAK_ROUNDS kills)
#   make install PREFIX=/usr/local
#   make deps               install the Debian packages we build with
#
# With SANITIZE set, everything builds into build/san so that the plain and
# sanitizer builds never mix objects.

CC       ?= cc
PREFIX   ?= /usr/local
WERROR   ?= -Werror
SANITIZE ?=
PKGS     := liburing fuse3 libzstd libisal cunit inih libsodium

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
# libsodium: the cluster's peer authentication (lib/peer.c), ckptd only.
SODIUM_LIBS:= $(shell pkg-config --libs libsodium 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
	    -Wmissing-prototypes -Wno-unused-parameter $(WERROR) \
	    -fPIC -D_GNU_SOURCE -Iinclude -Ilib $(PKG_CFLAGS) $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
LDLIBS   := $(PKG_LIBS) -lpthread

LIB_SRC    := $(wildcard lib/*.c)
# What only ckptd needs of lib/ (the cluster) stays out of libckpt.
CLIENT_LIB_SRC := $(filter-out lib/peer.c lib/place.c lib/nodes.c lib/extmap.c,$(LIB_SRC))
SERVER_SRC := $(wildcard server/*.c)
CLIENT_SRC := $(wildcard client/*.c)
TOOLS_SRC  := $(wildcard tools/*.c)
FUSE_SRC   := $(wildcard fuse/*.c)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
INTEG_SRC  := $(wildcard tests/integ/*.c)
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

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

.PHONY: all deps test check check-unit check-integ demo bench install clean fuzz soak
.SECONDARY:
all: $(CKPTD) $(CKPTCTL) $(CKPT_SO) $(CKPT_A) $(CKPTFS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

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

$(CKPTD): $(call obj,$(SERVER_SRC)) $(CORE_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(SODIUM_LIBS)

$(CKPTCTL): $(call obj,$(TOOLS_SRC)) $(CKPT_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm

$(BUILD)/ckptfs: $(call obj,$(FUSE_SRC)) $(CKPT_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS) $(LDLIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS) $(SODIUM_LIBS)

# The one unit test of server code: the PFS layout.
$(BUILD)/tests/test_pfslayout: $(BUILD)/obj/tests/unit/test_pfslayout.o \
		$(BUILD)/obj/server/pfslayout.o $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUNIT_LIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/integ/%.o $(CKPT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# deps: install what is missing from Debian, once.  Skipped when every
# pkg-config module and tool is already present.
# python3-numpy, python3-h5py and rsync are real clients the FUSE tests use;
# bc is for the benchmark scripts.  (python3-torch is used when present.)
DEB_PKGS := build-essential pkg-config liburing-dev libfuse3-dev fuse3 \
	    libzstd-dev libisal-dev libcunit1-dev libinih-dev libsodium-dev \
	    fio bc rsync \
	    python3-numpy python3-h5py
deps:
	@if pkg-config --exists $(PKGS) && command -v fio >/dev/null && \
	    command -v fusermount3 >/dev/null && command -v rsync >/dev/null && \
	    command -v bc >/dev/null && \
	    /usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null; then \
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

check: check-unit check-integ

# `make test` is what README.md and .ci/run call.  The recursive make picks up
# the pkg-config flags that exist only after deps has run.
test: deps
	@$(MAKE) --no-print-directory check

demo: deps
	@$(MAKE) --no-print-directory all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tools/demo.sh

bench: all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) tools/bench.sh
	@CKPT_BUILD=$(BUILD) tools/bench_drain.sh
	@if [ -x $(BUILD)/ckptfs ]; then CKPT_BUILD=$(BUILD) tools/bench_fuse.sh; fi

# soak: t_crashloop with many more SIGKILLs than `make test` runs.
SOAK_ROUNDS ?= 300
soak: all $(INTEG_BIN)
	@CKPT_BUILD=$(BUILD) CKPT_CRASH_ROUNDS=$(SOAK_ROUNDS) CKPT_SCALE=$$(( $(SOAK_ROUNDS) / 20 + 1 )) \
		tests/run-integ.sh t_crashloop

fuzz: $(CORE_A)
	@tests/fuzz/run.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 $(CKPTD) $(CKPTCTL) $(CKPTFS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(CKPT_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(CKPT_SO) $(DESTDIR)$(PREFIX)/lib/libckpt.so.1
	ln -sf libckpt.so.1 $(DESTDIR)$(PREFIX)/lib/libckpt.so
	install -m 644 include/ckpt.h $(DESTDIR)$(PREFIX)/include/
	@if [ -n "$(CKPTFS)" ]; then \
		install -d $(DESTDIR)/sbin && \
		sed 's|^installed=.*|installed=$(PREFIX)/bin/ckptfs|' fuse/mount.ckptfs \
			>$(DESTDIR)/sbin/mount.fuse.ckptfs && \
		chmod 755 $(DESTDIR)/sbin/mount.fuse.ckptfs && \
		ln -sf mount.fuse.ckptfs $(DESTDIR)/sbin/mount.ckptfs; \
	fi

clean:
	rm -rf build
