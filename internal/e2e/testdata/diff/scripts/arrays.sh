#!/bin/bash
# Arrays and associative arrays, as scripts keep tables.
declare -A color=([apple]=red [banana]=yellow)
fruits=(apple banana cherry)
for f in "${fruits[@]}"; do
	echo "$f is ${color[$f]:-unknown}"
done
fruits+=(date)
echo "${#fruits[@]} fruits, last ${fruits[-1]}, slice ${fruits[@]:1:2}"
IFS=, read -r -a parts <<< "a,b,,d"
printf '[%s]' "${parts[@]}"; echo
