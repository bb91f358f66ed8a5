package bench

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPeerNamesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range PeerNames {
		if err := ValidName(p.Ours); err != nil {
			t.Errorf("PeerNames: %v", err)
		}
		if seen[p.Ours] {
			t.Errorf("PeerNames lists %s twice", p.Ours)
		}
		seen[p.Ours] = true
		if p.Size != SizeS && p.Size != SizeL {
			t.Errorf("%s: size %q", p.Ours, p.Size)
		}
		if (p.Size == SizeL) != strings.HasSuffix(p.Ours, LargeSuffix) {
			t.Errorf("%s: size %s but the name %s %s", p.Ours, p.Size, map[bool]string{true: "ends in", false: "does not end in"}[strings.HasSuffix(p.Ours, LargeSuffix)], LargeSuffix)
		}
		// array/ names drop "array/" (and the size suffix) to make the key.
		if rest, ok := strings.CutPrefix(p.Ours, "array/"); ok && strings.TrimSuffix(rest, LargeSuffix) != p.Key {
			t.Errorf("%s maps onto %q, want %q", p.Ours, p.Key, strings.TrimSuffix(rest, LargeSuffix))
		}
		if key, size, ok := PeerKey(p.Ours); !ok || key != p.Key || size != p.Size {
			t.Errorf("PeerKey(%s) = %q %q %v", p.Ours, key, size, ok)
		}
	}
	if _, _, ok := PeerKey("host/noop"); ok {
		t.Errorf("PeerKey(host/noop) found a key")
	}
}

func repoPeersFile(t *testing.T) string {
	m, _ := filepath.Glob("../peers/h200-*.json")
	if len(m) == 0 {
		t.Skip("no peers/h200-*.json in the repository")
	}
	return m[len(m)-1]
}

func TestReadPeersRepoFile(t *testing.T) {
	path := repoPeersFile(t)
	p, err := ReadPeers(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Ceilings["d2d_copy_GBps(read+write)"] < 1000 {
		t.Errorf("ceilings %v", p.Ceilings)
	}
	// Every figure in the file is reachable from one of our names, except
	// the synchronizations at L (the same idle synchronize as at S).
	reach := map[string]bool{}
	for _, n := range PeerNames {
		reach[string(n.Size)+" "+n.Key] = true
	}
	for sec, m := range map[string]map[string]float64{"S": p.CupyS, "S ": p.TorchS, "L": p.CupyL, "L ": p.TorchL} {
		for k := range m {
			if size := strings.TrimSpace(sec); !reach[size+" "+k] && !(size == "L" && strings.HasPrefix(k, "sync/")) {
				t.Errorf("%s figure %q maps onto none of our names", size, k)
			}
		}
	}
	if path2, _ := filepath.Abs(path); FindPeersFile(".") != path2 {
		t.Errorf("FindPeersFile(.) = %q, want %q", FindPeersFile("."), path2)
	}
}

func TestReadPeers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p, err := ReadPeers(write("p.json", `{"ceilings": {"d2d_copy_GBps(read+write)": 4182.9},
		"cupy_S": {"reductions/reduce/Float32/1d": 22328.5, "sync/stream": 1834.5},
		"torch_S": {"reductions/reduce/Float32/1d": 25406, "sync/stream": 8332},
		"cupy_L": {"copy": 1288885.5}, "torch_L": {"copy": 521374.5},
		"meta": {"date": "2026-11-30"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		cupy, torch float64
		best        float64
		bestPeer    string
		ok          bool
		key         string
		size        Size
	}{
		{"array/reductions/reduce/Float32/1d", 22328.5, 25406, 22328.5, "CuPy", true, "reductions/reduce/Float32/1d", SizeS},
		{"array/copy/16k", 1288885.5, 521374.5, 521374.5, "PyTorch", true, "copy", SizeL},
		{"sync/stream/blocking", 1834.5, 8332, 1834.5, "CuPy", true, "sync/stream", SizeS},
		{"array/copy", 0, 0, 0, "", false, "copy", SizeS},
		{"host/noop", 0, 0, 0, "", false, "", ""},
	} {
		f, ok := p.Lookup(tc.name)
		best, peer := f.Best()
		if ok != tc.ok || f.CuPyNs != tc.cupy || f.TorchNs != tc.torch || best != tc.best || peer != tc.bestPeer || f.Key != tc.key || f.Size != tc.size {
			t.Errorf("Lookup(%s) = %+v %v, best %v %q", tc.name, f, ok, best, peer)
		}
	}
	if f := (PeerFigures{TorchNs: 5}); func() bool { b, n := f.Best(); return b != 5 || n != "PyTorch" }() {
		t.Errorf("Best with PyTorch only")
	}
	var nilp *Peers
	if _, ok := nilp.Lookup("array/copy"); ok {
		t.Errorf("nil Peers found figures")
	}
	nilp.Annotate(&Report{})

	if _, err := ReadPeers(write("bad.json", `{"ceilings": {}}`)); err == nil {
		t.Errorf("a file without sections was accepted")
	}
	if _, err := ReadPeers(write("broken.json", `{`)); err == nil {
		t.Errorf("broken JSON was accepted")
	}
	if _, err := ReadPeers(filepath.Join(dir, "missing.json")); err == nil {
		t.Errorf("a missing file was accepted")
	}
}

func TestFindPeersFile(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	if got := FindPeersFile(sub); got != "" {
		t.Errorf("FindPeersFile without peers = %q", got)
	}
	os.MkdirAll(filepath.Join(root, "peers"), 0o755)
	for _, n := range []string{"h200-2026-01-05.json", "h200-2026-11-30.json", "a100-2027-01-01.json", "h200-2026-11-30.md"} {
		os.WriteFile(filepath.Join(root, "peers", n), []byte("{}"), 0o644)
	}
	if got, want := FindPeersFile(sub), filepath.Join(root, "peers", "h200-2026-11-30.json"); got != want {
		t.Errorf("FindPeersFile = %q, want %q", got, want)
	}
}

// TestPeersScriptMatchesTable checks that peers/peers.py measures exactly the
// (key, size) pairs of PeerNames, from its --dry-run listing.
func TestPeersScriptMatchesTable(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command(py, "../peers/peers.py", "--dry-run")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("peers.py --dry-run: %v\n%s", err, stderr.String())
	}
	script := map[string]bool{}
	ceilings := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 4 {
			t.Fatalf("dry-run line %q", sc.Text())
		}
		switch f[0] {
		case "S", "L":
			script[f[0]+" "+f[1]] = true
		case "ceiling":
			ceilings++
		default:
			t.Errorf("dry-run line %q", sc.Text())
		}
	}
	table := map[string]bool{}
	for _, p := range PeerNames {
		table[string(p.Size)+" "+p.Key] = true
	}
	for k := range table {
		if !script[k] {
			t.Errorf("PeerNames has %q, peers.py does not measure it", k)
		}
	}
	for k := range script {
		if !table[k] {
			t.Errorf("peers.py measures %q, which no row of PeerNames maps onto", k)
		}
	}
	if ceilings != 6 {
		t.Errorf("%d ceilings listed, want the 6 of the peer file format", ceilings)
	}
}
