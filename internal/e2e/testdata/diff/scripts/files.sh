#!/bin/bash
# Files made, read line by line, counted and cleaned up.
set -euo pipefail
mkdir -p work/sub
for i in 1 2 3; do printf 'line %d\n' "$i" > "work/sub/f$i.txt"; done
cat work/sub/*.txt | sort -r > work/all.txt
n=0
while IFS= read -r line; do
	n=$((n + 1))
	echo "$n: ${line^^}"
done < work/all.txt
wc -l < work/all.txt
rm -r work/sub
ls work
