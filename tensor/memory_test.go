package tensor

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/internal/sysmem"
)

// TestZerosBeyondMemory asks for 8 TiB of zeros, within Go's address
// limit but beyond any test machine's memory: an ErrMemory *Error, not a
// failed allocation that ends the program.
func TestZerosBeyondMemory(t *testing.T) {
	_, err := Zeros(Float64, 1<<20, 1<<20)
	var e *Error
	if !errors.Is(err, ErrMemory) || !errors.As(err, &e) || e.Op != "MakeBuffer" {
		t.Fatalf("error %v, want an ErrMemory *Error from MakeBuffer", err)
	}
}

// TestAllocationsChecked fakes the available memory: a buffer that fits
// exactly is made, one element more is refused by the constructors and by
// the copies (Values with ErrMemory, Clone with nil), and an unknown figure
// refuses nothing.
func TestAllocationsChecked(t *testing.T) {
	big, err := Zeros(Float64, 126)
	if err != nil {
		t.Fatal(err)
	}
	restore := sysmem.Fake(1000, nil) // 125 float64
	t.Cleanup(restore)                // if a check stops the test early
	if _, err := Zeros(Float64, 125); err != nil {
		t.Fatalf("125 float64 in 1000 bytes: %v", err)
	}
	refused := map[string]error{}
	_, refused["Zeros"] = Zeros(Float64, 126)
	_, refused["Full"] = Full(Complex64, 1, 126)
	_, refused["Rand"] = Rand(NewRNG(1), Float64, 126)
	_, refused["MakeBuffer"] = MakeBuffer(Int64, 126)
	_, refused["Values"] = Values[float64](big)
	for name, err := range refused {
		if !errors.Is(err, ErrMemory) {
			t.Errorf("%s: error %v, want ErrMemory", name, err)
		}
	}
	if c := big.Clone(); c != nil {
		t.Error("Clone of 126 float64 in 1000 bytes is not nil")
	}
	restore()
	restore = sysmem.Fake(0, sysmem.ErrUnknown)
	_, err = Zeros(Float64, 1000)
	restore()
	if err != nil {
		t.Errorf("with the figure unknown: %v", err)
	}
}
