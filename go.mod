module wsh

go 1.26.8

require (
	github.com/caarlos0/env/v11 v11.4.2
	github.com/moby/profiles/seccomp v0.3.0
	github.com/opencontainers/runtime-spec v1.2.1
	github.com/rogpeppe/go-internal v1.16.0
	github.com/seccomp/libseccomp-golang v0.11.1
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.45.0
	mvdan.cc/sh/v3 v3.14.1
)

require golang.org/x/tools v0.38.0 // indirect
