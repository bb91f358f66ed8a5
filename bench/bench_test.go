package bench

import (
	"regexp"
	"strings"
	"testing"
)

func nop() error { return nil }

func TestRegistry(t *testing.T) {
	var r Registry
	r.Register(Benchmark{Name: "array/copy", Bytes: 8, Body: nop})
	r.Register(Benchmark{Name: "array/copy/16k", Group: "big", Body: nop, Reference: true})
	r.Register(Benchmark{Name: "sync/stream/blocking", Mode: Host, Body: nop})

	all := r.All()
	if len(all) != 3 || all[0].Name != "array/copy" || all[2].Name != "sync/stream/blocking" {
		t.Fatalf("All() = %v", all)
	}
	if all[0].Group != "array" || all[1].Group != "big" || all[2].Group != "sync" {
		t.Errorf("groups = %q %q %q, want array big sync", all[0].Group, all[1].Group, all[2].Group)
	}
	if b, ok := r.Lookup("array/copy"); !ok || b.Bytes != 8 {
		t.Errorf("Lookup(array/copy) = %v, %v", b, ok)
	}
	if _, ok := r.Lookup("nope"); ok {
		t.Errorf("Lookup(nope) found something")
	}
	if got := r.Select(regexp.MustCompile("copy")); len(got) != 2 {
		t.Errorf("Select(copy) = %d benchmarks, want 2", len(got))
	}
	if got := r.Select(regexp.MustCompile(`/16k$`)); len(got) != 1 || got[0].Name != "array/copy/16k" {
		t.Errorf("Select(/16k$) = %v", got)
	}
	if got := r.Select(nil); len(got) != 3 {
		t.Errorf("Select(nil) = %d benchmarks, want 3", len(got))
	}
	if ref, ok := r.Reference(); !ok || ref.Name != "array/copy/16k" {
		t.Errorf("Reference() = %v, %v", ref.Name, ok)
	}
}

func TestRegisterPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Benchmark
		msg  string
	}{
		{"empty name", Benchmark{Body: nop}, "empty name"},
		{"space", Benchmark{Name: "a b", Body: nop}, "space"},
		{"leading slash", Benchmark{Name: "/a", Body: nop}, "empty element"},
		{"double slash", Benchmark{Name: "a//b", Body: nop}, "empty element"},
		{"procs suffix", Benchmark{Name: "array/copy-8", Body: nop}, "GOMAXPROCS"},
		{"nil body", Benchmark{Name: "a"}, "nil Body"},
		{"bad mode", Benchmark{Name: "a", Mode: 7, Body: nop}, "invalid mode"},
		{"negative bytes", Benchmark{Name: "a", Bytes: -1, Body: nop}, "negative"},
		{"duplicate", Benchmark{Name: "dup", Body: nop}, "duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Registry
			r.Register(Benchmark{Name: "dup", Body: nop})
			defer func() {
				p := recover()
				if p == nil || !strings.Contains(p.(string), tc.msg) {
					t.Errorf("Register(%+v) panicked with %v, want %q", tc.b, p, tc.msg)
				}
			}()
			r.Register(tc.b)
		})
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"array/reductions/reduce/Float32/dims=1L", "kernel/launch", "array/random/rand!/Float32", "a-b", "x-1a", "host/memmove/2MB"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a\tb", "a/", "x-12", "a\x00"} {
		if ValidName(bad) == nil {
			t.Errorf("ValidName(%q) = nil, want an error", bad)
		}
	}
}

func TestModeText(t *testing.T) {
	for _, m := range []Mode{GPU, Host} {
		b, err := m.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Mode
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("mode %v round trip: %v %v", m, back, err)
		}
	}
	if _, err := Mode(9).MarshalText(); err == nil {
		t.Errorf("MarshalText of an invalid mode did not fail")
	}
	var m Mode
	if m.UnmarshalText([]byte("gpu")) == nil {
		t.Errorf("UnmarshalText(gpu) did not fail")
	}
}
