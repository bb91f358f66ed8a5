package montecarlo

import (
	"testing"

	"github.com/go-gpu/gpu/examples/internal/extest"
)

func TestMain(m *testing.M) { extest.Main(m, "github.com/go-gpu/gpu/examples/options/montecarlo") }
