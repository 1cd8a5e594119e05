#include "textflag.h"

// func rawForkCall(mode, nr, a1, a2, a3 uintptr) (pid int)
//
// A plain fork (clone with SIGCHLD and nothing shared). The child runs only
// the instructions below, never Go code: it puts SIGILL, SIGBUS and SIGSEGV
// back to their default action (the Go runtime's handlers have no runtime
// behind them in the child), makes one system call, with SYSCALL (mode 0)
// or the i386 gate INT $0x80 (mode 1), and exits with the errno it got (0
// for a success). A call that kills the child shows in its wait status.
TEXT ·rawForkCall(SB), NOSPLIT, $0-48
	MOVQ $56, AX                 // clone
	MOVQ $17, DI                 // SIGCHLD
	XORQ SI, SI
	XORQ DX, DX
	XORQ R10, R10
	XORQ R8, R8
	SYSCALL
	CMPQ AX, $0
	JEQ  child
	MOVQ AX, pid+40(FP)          // the child's pid, or -errno
	RET

child:
	MOVQ $13, AX                 // rt_sigaction(SIGILL, &sigDefault, NULL, 8)
	MOVQ $4, DI
	LEAQ ·sigDefault(SB), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	MOVQ $13, AX                 // SIGBUS
	MOVQ $7, DI
	SYSCALL
	MOVQ $13, AX                 // SIGSEGV
	MOVQ $11, DI
	SYSCALL
	XORQ R10, R10                // clone reads its fourth and fifth argument
	XORQ R8, R8
	MOVQ nr+8(FP), AX
	MOVQ a1+16(FP), DI
	MOVQ a2+24(FP), SI
	MOVQ a3+32(FP), DX
	CMPQ mode+0(FP), $1
	JEQ  int80
	SYSCALL
	JMP  exit

int80:
	MOVQ DI, BX                  // i386: eax, ebx, ecx, edx
	MOVQ SI, CX
	INT  $0x80

exit:
	CMPQ AX, $-4095              // -4095..-1 is -errno
	JCC  failed
	XORQ DI, DI
	JMP  done

failed:
	MOVQ AX, DI
	NEGQ DI

done:
	MOVQ $231, AX                // exit_group
	SYSCALL
	RET                          // not reached
