package tensor

import (
	"bytes"
	"io"
	"testing"
)

func BenchmarkWriteNpy(b *testing.B) {
	x, _ := Rand(NewRNG(1), Float64, 1<<20)
	b.SetBytes(8 << 20)
	for b.Loop() {
		if err := WriteNpy(io.Discard, x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadNpy(b *testing.B) {
	benchReadNpy(b, Float64, func(data []byte) io.Reader { return bytes.NewReader(data) })
}

// BenchmarkReadNpyUnsized reads through a reader that does not tell its
// size, so the buffer grows with the data read.
func BenchmarkReadNpyUnsized(b *testing.B) {
	benchReadNpy(b, Float32, func(data []byte) io.Reader { return plainReader{bytes.NewReader(data)} })
}

// benchReadNpy measures reading a .npy file of 2^20 random elements of dt
// through the reader open makes of the file's bytes.
func benchReadNpy(b *testing.B, dt DType, open func(data []byte) io.Reader) {
	x, _ := Rand(NewRNG(1), dt, 1<<20)
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadNpy(open(data)); err != nil {
			b.Fatal(err)
		}
	}
}
