package rendezvous

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
)

// The defaults of FromEnv.
const (
	DefaultMasterAddr = "127.0.0.1"
	DefaultMasterPort = 29500 // torchrun's default
)

// Env is the placement of this process in a job, in the style of torchrun's environment
// variables.
type Env struct {
	MasterAddr string // MASTER_ADDR: the host of rank 0
	MasterPort int    // MASTER_PORT: the TCP port rank 0 listens on
	WorldSize  int    // WORLD_SIZE: the number of ranks
	Rank       int    // RANK: this process's rank, 0 to WorldSize-1
	LocalRank  int    // LOCAL_RANK: this process's rank on its host (the GPU to use)
}

// FromEnv reads the placement from the environment:
//
//	MASTER_ADDR  host of rank 0; default 127.0.0.1 (set it when ranks run on several hosts)
//	MASTER_PORT  TCP port, 1 to 65535; default 29500
//	WORLD_SIZE   number of ranks, at least 1; default 1
//	RANK         0 to WORLD_SIZE-1; default 0, but required when WORLD_SIZE > 1
//	LOCAL_RANK   at least 0; default RANK (right on one host; set it on several)
//
// A variable set to the empty string counts as unset. It returns an error naming the
// variable for a value that is not a decimal integer or is out of range, for RANK set
// without WORLD_SIZE, and for WORLD_SIZE > 1 without RANK.
func FromEnv() (Env, error) {
	e := Env{MasterAddr: DefaultMasterAddr, MasterPort: DefaultMasterPort, WorldSize: 1}
	if v := os.Getenv("MASTER_ADDR"); v != "" {
		e.MasterAddr = v
	}
	var err error
	var set bool
	if e.MasterPort, _, err = envInt("MASTER_PORT", DefaultMasterPort); err != nil {
		return Env{}, err
	}
	if e.MasterPort < 1 || e.MasterPort > 65535 {
		return Env{}, fmt.Errorf("rendezvous: MASTER_PORT=%d is not a TCP port (1 to 65535)", e.MasterPort)
	}
	worldSet := false
	if e.WorldSize, worldSet, err = envInt("WORLD_SIZE", 1); err != nil {
		return Env{}, err
	}
	if e.WorldSize < 1 {
		return Env{}, fmt.Errorf("rendezvous: WORLD_SIZE=%d, want at least 1", e.WorldSize)
	}
	if e.Rank, set, err = envInt("RANK", 0); err != nil {
		return Env{}, err
	}
	switch {
	case set && !worldSet:
		return Env{}, fmt.Errorf("rendezvous: RANK is set but WORLD_SIZE is not")
	case !set && e.WorldSize > 1:
		return Env{}, fmt.Errorf("rendezvous: WORLD_SIZE=%d but RANK is not set", e.WorldSize)
	case e.Rank < 0 || e.Rank >= e.WorldSize:
		return Env{}, fmt.Errorf("rendezvous: RANK=%d is out of range for WORLD_SIZE=%d", e.Rank, e.WorldSize)
	}
	if e.LocalRank, _, err = envInt("LOCAL_RANK", e.Rank); err != nil {
		return Env{}, err
	}
	if e.LocalRank < 0 {
		return Env{}, fmt.Errorf("rendezvous: LOCAL_RANK=%d is negative", e.LocalRank)
	}
	return e, nil
}

// envInt reads an integer variable, returning def if it is unset or empty.
func envInt(name string, def int) (v int, set bool, err error) {
	s := os.Getenv(name)
	if s == "" {
		return def, false, nil
	}
	v, err = strconv.Atoi(s)
	if err != nil {
		return 0, true, fmt.Errorf("rendezvous: %s=%q is not a decimal integer", name, s)
	}
	return v, true, nil
}

// Addr returns MasterAddr:MasterPort, the address rank 0 listens on.
func (e Env) Addr() string {
	return net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort))
}

// Rendezvous calls Rendezvous with this placement: Rendezvous(ctx, e.Addr(), e.Rank,
// e.WorldSize, payload).
func (e Env) Rendezvous(ctx context.Context, payload []byte) (*Group, []byte, error) {
	return Rendezvous(ctx, e.Addr(), e.Rank, e.WorldSize, payload)
}
