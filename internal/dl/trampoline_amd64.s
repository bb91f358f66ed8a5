//go:build !cgo && linux && !gpu_nodlopen

#include "textflag.h"

// The trampoline of the direct calls without cgo (call_direct.go); it is what
// dl_trampoline is in the cgo build (impl_cgo.go), in assembly. runtime.cgocall runs it
// on the system stack with the C calling convention: DI holds the frame
//
//	fn 0, get 8, set 16, ctx 24, n 32, r 40, args 48 (a pointer to n words), reps 56
//
// With get != 0 it first calls get(&cur) and, if cur != ctx, set(ctx); a non-zero
// result of either is the call's result. Then fn(args[0], ..., args[n-1]): six
// arguments in registers, the rest on the stack (System V AMD64 ABI); the result goes
// from AX to r. It calls fn reps times (counting reps down in the frame) unless fn
// returns a non-zero int.
//
// Frame: the stack arguments (up to 18) at 0..143(SP), the register arguments at
// 144..191(SP), the frame at 192(SP), cur at 200(SP). 208 bytes plus the saved BP keep
// SP 16-byte aligned at the calls.

GLOBL ·trampoline(SB), NOPTR|RODATA, $8
DATA ·trampoline(SB)/8, $trampoline<>(SB)
GLOBL ·noop(SB), NOPTR|RODATA, $8
DATA ·noop(SB)/8, $noop<>(SB)

TEXT trampoline<>(SB), NOSPLIT, $208
	MOVQ DI, 192(SP)
	MOVQ 8(DI), AX
	TESTQ AX, AX
	JZ args
	MOVQ $0, 200(SP)
	LEAQ 200(SP), DI
	CALL AX
	TESTL AX, AX
	JNZ done
	MOVQ 192(SP), R11
	MOVQ 200(SP), AX
	CMPQ AX, 24(R11)
	JEQ args
	MOVQ 24(R11), DI
	MOVQ 16(R11), AX
	CALL AX
	TESTL AX, AX
	JNZ done

args:
	MOVQ 192(SP), R11
	MOVQ 32(R11), CX // n
	MOVQ 48(R11), SI // args
	LEAQ 144(SP), R8 // register arguments
	MOVQ SP, R9
	SUBQ $48, R9     // R9 + 8*i is stack argument i-6
	XORQ DX, DX

reg:
	CMPQ DX, CX
	JGE load
	CMPQ DX, $6
	JGE stack
	MOVQ (SI)(DX*8), AX
	MOVQ AX, (R8)(DX*8)
	INCQ DX
	JMP reg

stack:
	MOVQ (SI)(DX*8), AX
	MOVQ AX, (R9)(DX*8)
	INCQ DX
	CMPQ DX, CX
	JLT stack

load:
	MOVQ 144(SP), DI
	MOVQ 152(SP), SI
	MOVQ 160(SP), DX
	MOVQ 168(SP), CX
	MOVQ 176(SP), R8
	MOVQ 184(SP), R9
	MOVQ 0(R11), R10
	XORL AX, AX
	CALL R10
	MOVQ 192(SP), R11
	MOVQ AX, 40(R11)
	TESTL AX, AX
	JNZ ret
	DECQ 56(R11)
	JNZ args

ret:
	RET

done:
	MOVQ 192(SP), DI
	MOVQ AX, 40(DI)
	RET

// noop is an empty C function, for Noop.
TEXT noop<>(SB), NOSPLIT|NOFRAME, $0
	XORL AX, AX
	RET
