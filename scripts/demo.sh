# The demo that `make demo` runs through wsh, in a fresh temporary directory.
# Every external command below runs in wsh's jail.

echo "== what the kernel says about a command inside the jail (/proc/self/status):"
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status

echo
echo "== its network interfaces (/sys/class/net):"
ls /sys/class/net

echo
echo "== its processes (/proc):"
ps -eo pid,args | cut -c1-60

echo
echo "== a write outside the writable paths:"
if sh -c 'echo hello > /etc/wsh-demo'; then
	echo "!! the write to /etc succeeded: the jail is not in force"
	exit 1
fi

echo
echo "== a build in the working directory ($PWD), which is writable:"
printf '#include <stdio.h>\nint main(void) { puts("hello from a program built in the jail"); return 0; }\n' | sh -c 'cat > hello.c'
printf 'hello: hello.c\n\tcc -o hello hello.c\n' | sh -c 'cat > Makefile'
make && ./hello
