#!/bin/sh
# Run each CUnit test binary given as an argument under a timeout.
# A binary exits 0 on pass, 77 to skip, anything else on failure.
fail=0
for t in "$@"; do
	name=$(basename "$t")
	out=$(timeout 120 "$t" 2>&1)
	rc=$?
	case $rc in
	0)  echo "PASS unit/$name" ;;
	77) echo "SKIP unit/$name" ;;
	*)  echo "FAIL unit/$name (exit $rc)"; echo "$out" | tail -40; fail=1 ;;
	esac
done
exit $fail
