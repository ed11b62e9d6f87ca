package tensor

import (
	"bytes"
	"io"
	"testing"
)

func BenchmarkWriteNpy(b *testing.B) {
	x, _ := Rand(Float64, 1, 1<<20)
	b.SetBytes(8 << 20)
	for b.Loop() {
		if err := WriteNpy(io.Discard, x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadNpy(b *testing.B) {
	x, _ := Rand(Float64, 1, 1<<20)
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadNpy(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadNpyUnsized(b *testing.B) {
	x, _ := Rand(Float32, 1, 1<<20)
	var buf bytes.Buffer
	if err := WriteNpy(&buf, x); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadNpy(plainReader{bytes.NewReader(data)}); err != nil {
			b.Fatal(err)
		}
	}
}
