package nccl

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/nccl/internal/ncclapi"
	"github.com/go-gpu/gpu/nccl/rendezvous"
)

// UniqueID identifies a communicator while its ranks are created: one rank makes it
// with NewUniqueID and every rank passes the same bytes to NewComm (NCCL API:
// ncclUniqueId). An NCCL id holds the address of rank 0's bootstrap: send it to the
// other ranks by any means (FromEnv does it through package rendezvous).
type UniqueID [ncclapi.UniqueIDBytes]byte

// cpuIDMagic starts the ids NewUniqueID makes when NCCL is unavailable; NCCL's own ids
// start with a random 64-bit magic number, so the two can't be confused in practice.
var cpuIDMagic = []byte("go-gpu/cpu-comm\x00")

// NewUniqueID returns a new id for NewComm (NCCL API: ncclGetUniqueId). Where NCCL is
// unavailable it returns random bytes marked for the CPU communicator, which only
// serve ranks in this process on the CPU backend (NewComm on CUDA rejects them).
func NewUniqueID() (UniqueID, error) {
	var id UniqueID
	nid, err := ncclapi.GetUniqueID()
	if err == nil {
		return UniqueID(nid), nil
	}
	if !errors.Is(err, ncclapi.ErrUnavailable) {
		return id, err
	}
	copy(id[:], cpuIDMagic)
	rand.Read(id[len(cpuIDMagic):])
	return id, nil
}

func (id UniqueID) isCPU() bool { return bytes.HasPrefix(id[:], cpuIDMagic) }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// NewGroup makes a communicator of the devices, one rank per device (rank i on
// devs[i]), all driven by this process (NCCL API: ncclGroupStart, then
// ncclCommInitRankConfig per device, then ncclGroupEnd: what ncclCommInitAll does, but
// non-blocking). The devices must be distinct devices of one backend: CUDA devices, or
// CPU devices made with gpu.NewDevice(cpu.New(0)) (the CPU communicator).
//
// ctx bounds the creation, and then the communicators' lives: when it ends they are
// aborted (see Comm.Abort). Use a context that lives as long as the communicators: a
// context with a timeout for the creation alone aborts them later.
//
// One goroutine driving several ranks must launch their collectives together, in a
// Group (Group(comms, f)); or drive each rank from a goroutine of its own.
func NewGroup(ctx context.Context, devs []*gpu.Device, opts ...Option) ([]*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("nccl: NewGroup with a nil context: %w", gpu.ErrInvalidValue)
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("nccl: NewGroup of no device: %w", gpu.ErrInvalidValue)
	}
	for i, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("nccl: NewGroup: device %d is nil: %w", i, gpu.ErrInvalidValue)
		}
		if d.Backend() != devs[0].Backend() {
			return nil, fmt.Errorf("nccl: NewGroup of %s and %s devices: %w", devs[0].Backend(), d.Backend(), gpu.ErrInvalidValue)
		}
		for j, e := range devs[:i] {
			if d == e || d.BackendDevice() == e.BackendDevice() {
				return nil, fmt.Errorf("nccl: NewGroup: devices %d and %d are the same device %v (one rank per device): %w", j, i, d, gpu.ErrInvalidValue)
			}
		}
	}
	o := collect(opts)
	switch devs[0].Backend() {
	case "cpu":
		return newCPUGroup(ctx, devs, o)
	case "cuda":
		return newCUDAGroup(ctx, devs, o)
	}
	return nil, fmt.Errorf("nccl: NewGroup on the %s backend: %w", devs[0].Backend(), ErrNotSupported)
}

// NewComm makes this rank's communicator of a clique of world ranks, one per process
// (or per goroutine), each calling NewComm with the same id and its own rank (NCCL API:
// ncclCommInitRankConfig, non-blocking, polled with ncclCommGetAsyncError). It returns
// when every rank has joined, or with ctx's error if ctx ends first (the creation is
// then aborted: NCCL API: ncclCommAbort).
//
// ctx then bounds the communicator's life as for NewGroup: when it ends, the
// communicator is aborted.
//
// On the CPU backend the ranks must be goroutines of this process, on distinct CPU
// devices, that share the id (from NewUniqueID); ranks in other processes are not
// supported.
func NewComm(ctx context.Context, dev *gpu.Device, id UniqueID, rank, world int, opts ...Option) (*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("nccl: NewComm with a nil context: %w", gpu.ErrInvalidValue)
	}
	if dev == nil {
		return nil, fmt.Errorf("nccl: NewComm on a nil device: %w", gpu.ErrInvalidValue)
	}
	if world < 1 || rank < 0 || rank >= world {
		return nil, fmt.Errorf("nccl: NewComm: rank %d of %d ranks is out of range: %w", rank, world, gpu.ErrInvalidValue)
	}
	o := collect(opts)
	switch dev.Backend() {
	case "cpu":
		return newCPUComm(ctx, dev, id, rank, world, o)
	case "cuda":
		if id.isCPU() {
			return nil, fmt.Errorf("nccl: NewComm on %v with an id NewUniqueID made without NCCL (%v): %w", dev, ncclapi.Load(), gpu.ErrInvalidValue)
		}
		return newCUDAComm(ctx, dev, id, rank, world, o, nil)
	}
	return nil, fmt.Errorf("nccl: NewComm on the %s backend: %w", dev.Backend(), ErrNotSupported)
}

// FromEnv makes this process's communicator of a job started in the style of torchrun:
// it reads RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and LOCAL_RANK (see
// rendezvous.FromEnv), meets the other ranks over TCP (rank 0 listens at
// MASTER_ADDR:MASTER_PORT, makes the id with NewUniqueID and sends it to the others),
// then calls NewComm. A nil dev means CUDA device LOCAL_RANK.
//
// The rendezvous connection stays open while the communicator lives, as a liveness
// check (a barrier every 250 ms): a rank whose process exits, or whose communicator is
// aborted or closed, is noticed by the others within about a second. NCCL alone does
// not notice a peer that exits while the others' kernels wait for it over NVLink. A
// rank that notices gives its collectives in flight a grace period of two seconds (the
// peer may have closed after its last collective, with this rank still finishing its
// own), then aborts the communicator (see Comm.Abort); with nothing in flight it only
// makes later calls fail, and leaves the communicator to Close. Err reports the loss.
//
// On the CPU backend only WORLD_SIZE=1 is supported (a communicator of one rank);
// more ranks return an error wrapping ErrNotSupported.
func FromEnv(ctx context.Context, dev *gpu.Device, opts ...Option) (*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("nccl: FromEnv with a nil context: %w", gpu.ErrInvalidValue)
	}
	env, err := rendezvous.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("nccl: FromEnv: %w (%w)", err, gpu.ErrInvalidValue)
	}
	if dev == nil {
		if dev, err = gpu.OpenBackend("cuda", env.LocalRank); err != nil {
			return nil, fmt.Errorf("nccl: FromEnv: opening CUDA device LOCAL_RANK=%d: %w", env.LocalRank, err)
		}
	}
	if dev.Backend() == "cpu" {
		if env.WorldSize > 1 {
			return nil, fmt.Errorf("nccl: FromEnv: %d processes on the CPU backend (the CPU communicator serves ranks in one process): %w", env.WorldSize, ErrNotSupported)
		}
		comms, err := NewGroup(ctx, []*gpu.Device{dev}, opts...)
		if err != nil {
			return nil, err
		}
		return comms[0], nil
	}
	if dev.Backend() != "cuda" {
		return nil, fmt.Errorf("nccl: FromEnv on the %s backend: %w", dev.Backend(), ErrNotSupported)
	}
	var payload []byte
	if env.Rank == 0 {
		id, err := NewUniqueID()
		if err != nil {
			return nil, err
		}
		payload = id[:]
	}
	g, payload, err := env.Rendezvous(ctx, payload)
	if err != nil {
		return nil, fmt.Errorf("nccl: FromEnv: rank %d: %w", env.Rank, err)
	}
	var id UniqueID
	if len(payload) != len(id) {
		g.Close()
		return nil, fmt.Errorf("nccl: FromEnv: rank %d: rank 0 sent %d bytes, not an id of %d: %w", env.Rank, len(payload), len(id), gpu.ErrInvalidValue)
	}
	copy(id[:], payload)
	return newCUDAComm(ctx, dev, id, env.Rank, env.WorldSize, collect(opts), g)
}
