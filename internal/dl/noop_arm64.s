//go:build !cgo && linux && !gpu_nodlopen

#include "textflag.h"

GLOBL ·noop(SB), NOPTR|RODATA, $8
DATA ·noop(SB)/8, $noop<>(SB)

// noop is an empty C function, for Noop.
TEXT noop<>(SB), NOSPLIT|NOFRAME, $0
	MOVD $0, R0
	RET
