#!/bin/sh
# Pipelines of real tools, subshells and command substitution.
printf '%s\n' banana apple cherry apple | sort | uniq -c | sort -rn | head -1
total=$(seq 1 10 | paste -sd+ | bc 2>/dev/null || seq 1 10 | awk '{s+=$1} END {print s}')
echo "total=$total"
( cd / && pwd )
echo "back in $(basename "$PWD" | wc -c) chars"
echo hello | { read -r w; echo "read: $w"; }
