#!/bin/sh
# deps.sh [test]: makes sure the C dependencies of wsh's cgo build are
# here: libseccomp-dev (for github.com/seccomp/libseccomp-golang) and
# pkg-config; with test, also the programs the end-to-end tests run in the
# jail and around it (tmux types into a terminal). As root it installs
# what is missing with apt-get; otherwise it prints the command.
set -eu

missing=""
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if ! pkg-config --exists libseccomp 2>/dev/null; then
	missing="$missing libseccomp-dev"
fi
if [ "${1:-}" = test ]; then
	for c in tmux python3 git strace curl; do
		command -v $c >/dev/null 2>&1 || missing="$missing $c"
	done
fi
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "wsh needs these Debian packages to build${1:+ and test}:$missing" >&2
	echo "install them with:" >&2
	echo "    sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "wsh needs:$missing (libseccomp's headers and pkg-config); there is no apt-get here, install them with your package manager" >&2
	exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q $missing >&2
