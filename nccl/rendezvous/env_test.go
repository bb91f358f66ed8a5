package rendezvous

import (
	"strings"
	"testing"
)

var envVars = []string{"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK"}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want Env
		err  string
	}{
		{name: "defaults", want: Env{MasterAddr: "127.0.0.1", MasterPort: 29500, WorldSize: 1}},
		{name: "torchrun", env: map[string]string{"MASTER_ADDR": "node7", "MASTER_PORT": "1234",
			"WORLD_SIZE": "8", "RANK": "5", "LOCAL_RANK": "1"},
			want: Env{MasterAddr: "node7", MasterPort: 1234, WorldSize: 8, Rank: 5, LocalRank: 1}},
		{name: "local rank defaults to rank", env: map[string]string{"WORLD_SIZE": "2", "RANK": "1"},
			want: Env{MasterAddr: "127.0.0.1", MasterPort: 29500, WorldSize: 2, Rank: 1, LocalRank: 1}},
		{name: "world of one without rank", env: map[string]string{"WORLD_SIZE": "1"},
			want: Env{MasterAddr: "127.0.0.1", MasterPort: 29500, WorldSize: 1}},
		{name: "empty counts as unset", env: map[string]string{"MASTER_ADDR": "", "RANK": ""},
			want: Env{MasterAddr: "127.0.0.1", MasterPort: 29500, WorldSize: 1}},
		{name: "rank without world", env: map[string]string{"RANK": "0"}, err: "RANK is set but WORLD_SIZE is not"},
		{name: "world without rank", env: map[string]string{"WORLD_SIZE": "4"}, err: "WORLD_SIZE=4 but RANK is not set"},
		{name: "rank too big", env: map[string]string{"WORLD_SIZE": "4", "RANK": "4"}, err: "RANK=4 is out of range for WORLD_SIZE=4"},
		{name: "negative rank", env: map[string]string{"WORLD_SIZE": "4", "RANK": "-1"}, err: "RANK=-1 is out of range"},
		{name: "zero world", env: map[string]string{"WORLD_SIZE": "0", "RANK": "0"}, err: "WORLD_SIZE=0, want at least 1"},
		{name: "not a number", env: map[string]string{"WORLD_SIZE": "two", "RANK": "0"}, err: `WORLD_SIZE="two" is not a decimal integer`},
		{name: "bad port", env: map[string]string{"MASTER_PORT": "70000"}, err: "MASTER_PORT=70000 is not a TCP port"},
		{name: "port not a number", env: map[string]string{"MASTER_PORT": "29500/tcp"}, err: `MASTER_PORT="29500/tcp"`},
		{name: "negative local rank", env: map[string]string{"LOCAL_RANK": "-2"}, err: "LOCAL_RANK=-2 is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range envVars {
				t.Setenv(v, c.env[v])
			}
			got, err := FromEnv()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("FromEnv() = %+v, %v; want error %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("FromEnv() = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestEnvAddr(t *testing.T) {
	for _, c := range []struct {
		e    Env
		want string
	}{
		{Env{MasterAddr: "127.0.0.1", MasterPort: 29500}, "127.0.0.1:29500"},
		{Env{MasterAddr: "::1", MasterPort: 80}, "[::1]:80"},
		{Env{MasterAddr: "node7", MasterPort: 1}, "node7:1"},
	} {
		if got := c.e.Addr(); got != c.want {
			t.Errorf("Addr() = %q, want %q", got, c.want)
		}
	}
}

func TestEnvRendezvous(t *testing.T) {
	checkNoLeak(t)
	for _, v := range envVars {
		t.Setenv(v, "")
	}
	e, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	g, p, err := e.Rendezvous(t.Context(), []byte("solo"))
	if err != nil || string(p) != "solo" || g.World() != 1 {
		t.Fatalf("Rendezvous = %q, %v", p, err)
	}
	g.Close()
}
