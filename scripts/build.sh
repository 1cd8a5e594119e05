#!/bin/sh
# build.sh OUT [PKG]: builds wsh as shipped (or, with PKG=test:DIR, the test
# binary of DIR the same way) to OUT. First the jail init, without cgo
# (go generate ./wrap), then the binary, static, with -tags wshinit so that
# the init is embedded in it. make build, the e2e tests and bench/run.sh all
# build here, so the tests run the artifact as shipped.
set -eu
GO=${GO:-go}
out=$(realpath -m "$1")
pkg=${2:-./cmd/wsh}
cd "$(dirname "$0")/.."
$GO generate ./wrap
tags='netgo osusergo wshinit'
ldflags='-linkmode external -extldflags "-static"'
case $pkg in
test:*) $GO test -c -tags "$tags" -ldflags "$ldflags" -o "$out" "${pkg#test:}" ;;
*) $GO build -tags "$tags" -ldflags "$ldflags" -o "$out" "$pkg" ;;
esac
