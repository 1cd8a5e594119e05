module example.com/agent

go 1.26.8

require (
	mvdan.cc/sh/v3 v3.14.1
	wsh v0.0.0
)

require (
	github.com/caarlos0/env/v11 v11.4.2 // indirect
	github.com/seccomp/libseccomp-golang v0.11.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/term v0.45.0 // indirect
)

replace wsh => ../..
