#!/bin/sh
# together.sh NAME CMD [NAME CMD ...]: runs the commands at once (each with
# sh -c), each one's output to a file of its own; then prints each output
# whole, in the order given, and a summary: one line a command, with its
# status and time. Exits 1 if any failed. make test runs the last of its
# steps with it, which do not disturb each other, so that the machine's
# cores are used while the slowest runs.
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/wsh-together.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
n=0
names=""
while [ $# -ge 2 ]; do
	n=$((n + 1))
	printf '%s\n' "$1" > "$dir/$n.name"
	( start=$(date +%s); sh -c "$2" > "$dir/$n.out" 2>&1; echo $? > "$dir/$n.rc"; echo $(( $(date +%s) - start )) > "$dir/$n.secs" ) &
	shift 2
done
if [ $# -ne 0 ]; then
	echo "together.sh: a NAME without its CMD" >&2
	exit 2
fi
wait
failed=0
i=1
while [ $i -le $n ]; do
	echo "=== $(cat "$dir/$i.name")"
	cat "$dir/$i.out"
	i=$((i + 1))
done
echo "=== summary"
i=1
while [ $i -le $n ]; do
	rc=$(cat "$dir/$i.rc")
	if [ "$rc" = 0 ]; then word=ok; else word=FAIL; failed=1; fi
	printf '%-4s %s (%ss, status %s)\n' "$word" "$(cat "$dir/$i.name")" "$(cat "$dir/$i.secs")" "$rc"
	i=$((i + 1))
done
exit $failed
