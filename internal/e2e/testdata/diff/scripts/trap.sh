#!/bin/bash
# Cleanup on exit, and an error caught by set -e in a function.
tmp=$(mktemp -d ./tmp.XXXXXX)
cleanup() { rm -rf "$tmp"; echo "cleaned"; }
trap cleanup EXIT
echo data > "$tmp/x"
check() { [ -s "$tmp/x" ] && echo "has data"; }
check
false || echo "recovered"
exit 3
