package random

// The tests run the generated kernels on the PTX simulator (internal/ptxsim) to
// compare what the PTX computes with the Go code bit for bit on a machine without a
// GPU.

import (
	"fmt"

	"github.com/go-gpu/gpu/internal/ptxsim"
)

type pkernel struct {
	f      *ptxsim.Func
	params []string
}

// parsePTX parses a module holding one kernel.
func parsePTX(src string) (*pkernel, error) {
	m, err := ptxsim.Parse(src)
	if err != nil {
		return nil, err
	}
	es := m.Entries()
	if len(es) != 1 {
		return nil, fmt.Errorf("%d kernels in the module, want 1", len(es))
	}
	k := &pkernel{f: es[0]}
	for _, p := range es[0].Params {
		k.params = append(k.params, p.Name)
	}
	return k, nil
}

// run executes one thread; it panics on a fault.
func (k *pkernel) run(params map[string]uint64, tid, ntid, ctaid, nctaid uint32, mem ptxsim.Memory) int {
	args := make([]uint64, len(k.params))
	for i, n := range k.params {
		args[i] = params[n]
	}
	steps, err := k.f.Run(mem, ptxsim.Dim{Tid: tid, Ntid: ntid, Ctaid: ctaid, Nctaid: nctaid}, args)
	if err != nil {
		panic(err)
	}
	return steps
}

// launch runs every thread of a grid of nctaid blocks of ntid threads.
func (k *pkernel) launch(args []uint64, ntid, nctaid uint32, mem ptxsim.Memory) {
	if err := k.f.Launch(mem, ptxsim.Linear(int(nctaid), int(ntid)), args); err != nil {
		panic(err)
	}
}

// sparseMem records every byte stored; the kernels load nothing.
type sparseMem map[uint64]byte

func (m sparseMem) Load(addr uint64, b []byte) error {
	return fmt.Errorf("load at %#x from write-only memory", addr)
}

func (m sparseMem) Store(addr uint64, b []byte) error {
	for i, v := range b {
		m[addr+uint64(i)] = v
	}
	return nil
}
