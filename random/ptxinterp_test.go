package random

// The tests run the generated kernels in the shared PTX interpreter
// (internal/ptxinterp), one thread at a time, to compare what the PTX computes with the
// Go code bit for bit on a machine without a GPU. These adapters keep the tests' names.

import (
	"fmt"

	"github.com/go-gpu/gpu/internal/ptxinterp"
)

type pkernel struct {
	f      *ptxinterp.Func
	params []string
}

// parsePTX parses a module holding one kernel.
func parsePTX(src string) (*pkernel, error) {
	m, err := ptxinterp.Parse(src)
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
func (k *pkernel) run(params map[string]uint64, tid, ntid, ctaid, nctaid uint32, mem ptxinterp.Memory) int {
	args := make([]uint64, len(k.params))
	for i, n := range k.params {
		args[i] = params[n]
	}
	steps, err := k.f.Run(mem, ptxinterp.Dim{Tid: tid, Ntid: ntid, Ctaid: ctaid, Nctaid: nctaid}, args)
	if err != nil {
		panic(err)
	}
	return steps
}

// launch runs every thread of a grid of nctaid blocks of ntid threads.
func (k *pkernel) launch(args []uint64, ntid, nctaid uint32, mem ptxinterp.Memory) {
	if err := k.f.Launch(mem, nctaid, ntid, args); err != nil {
		panic(err)
	}
}

// sliceMem is device memory backed by a byte slice at address base.
type sliceMem struct {
	base uint64
	b    []byte
}

func (m *sliceMem) span(addr uint64, n int) ([]byte, error) {
	if addr < m.base || addr+uint64(n) > m.base+uint64(len(m.b)) {
		return nil, fmt.Errorf("%d bytes at %#x outside [%#x, %#x)", n, addr, m.base, m.base+uint64(len(m.b)))
	}
	return m.b[addr-m.base : addr-m.base+uint64(n)], nil
}

func (m *sliceMem) Load(addr uint64, b []byte) error {
	s, err := m.span(addr, len(b))
	copy(b, s)
	return err
}

func (m *sliceMem) Store(addr uint64, b []byte) error {
	s, err := m.span(addr, len(b))
	copy(s, b)
	return err
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
