//go:build !cgo && linux && !gpu_nodlopen

#include "textflag.h"

// The trampoline of the direct calls without cgo on arm64: trampoline_amd64.s's twin
// (see there, and dl_trampoline in impl_cgo.go). runtime.cgocall runs it on the system
// stack with the C calling convention (AAPCS64): R0 holds the frame
//
//	fn 0, get 8, set 16, ctx 24, n 32, r 40, args 48 (a pointer to n words), reps 56
//
// Eight arguments go in R0-R7, the rest on the stack from 0(RSP) at the call.
//
// Our stack, below the 16 bytes the assembler's prologue takes to save LR (R30): the
// stack arguments (up to 16) at 0..127(RSP), the frame at 128(RSP), cur at 136(RSP), the
// register arguments at 144..207(RSP), and 208..223 left alone, since the prologue saves
// the frame pointer (R29, callee-saved) at 216(RSP): 224 bytes, a multiple of 16 as
// AAPCS64 requires of SP.

GLOBL ·trampoline(SB), NOPTR|RODATA, $8
DATA ·trampoline(SB)/8, $trampoline<>(SB)
GLOBL ·noop(SB), NOPTR|RODATA, $8
DATA ·noop(SB)/8, $noop<>(SB)

TEXT trampoline<>(SB), NOSPLIT, $0
	SUB  $224, RSP
	MOVD R0, 128(RSP)
	MOVD 8(R0), R1
	CBZ  R1, args
	MOVD ZR, 136(RSP)
	ADD  $136, RSP, R0
	BL   (R1)
	CBNZW R0, done
	MOVD 128(RSP), R9
	MOVD 136(RSP), R1
	MOVD 24(R9), R2
	CMP  R1, R2
	BEQ  args
	MOVD R2, R0
	MOVD 16(R9), R1
	BL   (R1)
	CBNZW R0, done

args:
	MOVD 128(RSP), R9
	MOVD 32(R9), R3  // n
	MOVD 48(R9), R4  // args
	ADD  $144, RSP, R5
	MOVD RSP, R6
	SUB  $64, R6     // R6 + 8*i is stack argument i-8
	MOVD ZR, R7

reg:
	CMP  R3, R7
	BGE  load
	CMP  $8, R7
	BGE  stack
	MOVD (R4)(R7<<3), R8
	MOVD R8, (R5)(R7<<3)
	ADD  $1, R7
	B    reg

stack:
	MOVD (R4)(R7<<3), R8
	MOVD R8, (R6)(R7<<3)
	ADD  $1, R7
	CMP  R3, R7
	BLT  stack

load:
	MOVD 144(RSP), R0
	MOVD 152(RSP), R1
	MOVD 160(RSP), R2
	MOVD 168(RSP), R3
	MOVD 176(RSP), R4
	MOVD 184(RSP), R5
	MOVD 192(RSP), R6
	MOVD 200(RSP), R7
	MOVD 0(R9), R10
	BL   (R10)
	MOVD 128(RSP), R9
	MOVD R0, 40(R9)
	CBNZW R0, ret
	MOVD 56(R9), R1
	SUBS $1, R1
	MOVD R1, 56(R9)
	BNE  args

ret:
	ADD  $224, RSP
	RET

done:
	MOVD 128(RSP), R9
	MOVD R0, 40(R9)
	ADD  $224, RSP
	RET

// noop is an empty C function, for Noop.
TEXT noop<>(SB), NOSPLIT|NOFRAME, $0
	MOVD $0, R0
	RET
