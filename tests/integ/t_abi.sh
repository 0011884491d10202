#!/bin/bash
# t_abi: libckpt.so exports every function include/ckpt.h declares and
# nothing else, and the C example in README.md compiles against the header,
# links against libckpt.so alone, and checkpoints through a real ckptd.
# abi/grow.c, built the same way, checks ckpt.h's growth rule: a sized call
# writes exactly the caller's size (guard bytes past it stay), and the
# original calls exactly the structs' first release.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"

SO=$BUILD/libckpt.so
grep -oE '\bckpt_[a-z0-9_]+\(' "$ROOT/include/ckpt.h" | tr -d '(' | sort -u >"$T/declared"
nm -D --defined-only "$SO" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' |
	sort -u >"$T/exported"
missing=$(comm -23 "$T/declared" "$T/exported")
[ -z "$missing" ] || fail "declared in ckpt.h but not exported: $(echo $missing)"
extra=$(comm -13 "$T/declared" "$T/exported")
[ -z "$extra" ] || fail "exported but not in ckpt.h: $(echo $extra)"

/usr/bin/python3 - "$ROOT/README.md" "$T/example.c" <<'PY' || fail "no C example in README.md"
import sys
s = open(sys.argv[1]).read()
a = s.index('```c\n#include <ckpt.h>') + 5
b = s.index('```', a)
main = '\nint main(void) { static char w[1 << 20]; return save_checkpoint(1, w, sizeof(w)) < 0; }\n'
open(sys.argv[2], 'w').write(s[a:b] + main)
PY
# A sanitizer build's library needs its runtime in the program too.
SAN=
nm -D "$SO" | grep -q __asan_init && SAN=-fsanitize=address,undefined
cc $SAN -Wall -Wextra -Werror -I"$ROOT/include" -o "$T/example" "$T/example.c" \
	-L"$BUILD" -lckpt -Wl,-rpath,"$BUILD" || fail "README example does not build"
ckptd_conf d
start_ckptd d
CKPT_SOCKET=$(sock d) "$T/example" || fail "README example failed against ckptd"
[ "$(vstate d llama70b/run3 step-001200)" = sealed ] || fail "README example's version is not sealed"
cc $SAN -Wall -Wextra -Werror -I"$ROOT/include" -o "$T/grow" "$ROOT/tests/integ/abi/grow.c" \
	-L"$BUILD" -lckpt -Wl,-rpath,"$BUILD" || fail "abi/grow.c does not build"
CKPT_SOCKET=$(sock d) "$T/grow" abi/grow v1 a ||
	fail "a sized call wrote outside the caller's struct (abi/grow.c)"
stop_ckptd d
finish
