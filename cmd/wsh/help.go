package main

// help is what wsh --help, wsh -h and wsh help print: one screen that says
// what wsh is, what it confines, how to change that, and where to read
// more. The usage lines come first, as they do after a bad command line.
const help = usage + `

wsh is a shell (bash's language, mvdan.cc/sh) in which every external
command runs confined, in a Linux jail wsh makes itself. By default a
command sees the host read-only, except the start directory, /tmp and
$TMPDIR; its $HOME is copy-on-write (what it writes there stays with wsh);
the files the host runs later (git hooks and config, .mcp.json, .vscode,
shell rc files) stay read-only; it has no network but loopback, no
capabilities, no new privileges, a seccomp filter, and no view of the
host's processes. Where the host refuses namespaces wsh says so once and
steps down to Landlock and seccomp; it never drops the jail silently.

Variables (a bad value is exit 2, naming the variable):
  WSH_WRITABLE=PATH:...    more writable paths
  WSH_HIDE=PATH:...        paths commands cannot see
  WSH_NETWORK=none|proxy|host, WSH_ALLOW_HOSTS=HOST,...
                           the network (proxy: only the hosts named)
  WSH_HOME=overlay|readonly|cow
                           the jail's $HOME (cow: copy-on-write or fail)
  WSH_JAIL=session|command one jail per run, or one per command
  WSH_REQUIRE_SANDBOX=1|landlock|seccomp
                           fail closed (exit 126) below that rung
  WSH_NO_SANDBOX=1         no jail at all: for hosts where something else,
                           a container, is already the boundary

  wsh doctor               is the jail in force here, and if not, why
  wsh home [reset]         what the jail's copy-on-write home holds
  wsh --version            the version, and the rung this host gives

Docs: README.md, docs/sandbox.md (what is confined, and what is not),
docs/config.md (every variable), docs/doctor.md; in the source tree, or
with the module wsh at the version above.`
