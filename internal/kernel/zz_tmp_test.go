package kernel

import (
	"os"
	"testing"
)

func TestZZDumpConcat(t *testing.T) {
	for _, r := range []int{1, 2} {
		src, _, err := (&ConcatRows{Inputs: 2, Vec: 16, Rows: r}).PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile("/tmp/concat_r"+string(rune('0'+r))+".ptx", []byte(src), 0o644)
	}
}
