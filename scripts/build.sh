#!/bin/sh
# build.sh OUT [PKG]: builds wsh as shipped (or, with PKG=test:DIR, the test
# binary of DIR the same way) to OUT. First the jail init, without cgo
# (go generate ./internal/launch), then the binary, static, with -tags wshinit so that
# the init is embedded in it. make build, the e2e tests and internal/bench/run.sh all
# build here, so the tests run the artifact as shipped.
set -eu
GO=${GO:-go}
out=$(realpath -m "$1")
pkg=${2:-./cmd/wsh}
cd "$(dirname "$0")/.."
$GO generate ./internal/launch
# The binary checks, when it makes its first jail, that the init it embeds
# is the one generated here (internal/launch/init_embed.go).
sum=$(sha256sum internal/launch/initbin/wsh-jail-init | cut -d' ' -f1)
tags='netgo osusergo wshinit'
# The version names the commit (GOFLAGS may have -buildvcs=false).
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$rev" != unknown ] && ! git diff --quiet HEAD -- 2>/dev/null; then rev=$rev-dirty; fi
ldflags="-linkmode external -extldflags \"-static\" -X wsh/internal/launch.initSum=$sum -X main.version=0.1.0-dev+$rev"
case $pkg in
test:*) $GO test -c -tags "$tags" -ldflags "$ldflags" -o "$out" "${pkg#test:}" ;;
*) $GO build -tags "$tags" -ldflags "$ldflags" -o "$out" "$pkg" ;;
esac
