#!/bin/sh
# Options and arguments, as a small CLI parses them.
usage() { echo "usage: $0 [-v] [-n N] FILE..." >&2; exit 2; }
verbose=0 n=1
while getopts vn: opt; do
	case $opt in
	v) verbose=1 ;;
	n) n=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- one two "three four"
i=0
for f in "$@"; do
	i=$((i + 1))
	[ "$verbose" = 1 ] && echo "arg $i: [$f]"
done
echo "n=$n count=$#"
