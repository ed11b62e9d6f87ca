package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestBenchGemm(t *testing.T) {
	line := regexp.MustCompile(`^gemm dtype=(float64|float32|complex128|complex64) n=\d+ batch=\d+ threads=\d+ median_ms=[0-9.]+ gflops=[0-9.]+$`)
	for _, args := range [][]string{
		{"-n", "17", "-dtype", "float64", "-threads", "1", "-runs", "2"},
		{"-n", "8", "-dtype", "float32", "-threads", "2", "-batch", "3", "-runs", "1"},
		{"-n", "5", "-dtype", "complex128", "-runs", "1"},
		{"-n", "5", "-dtype", "complex64", "-runs", "1"},
	} {
		var out bytes.Buffer
		if err := runBenchGemm(context.Background(), args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if last := lines[len(lines)-1]; !line.MatchString(last) {
			t.Errorf("%v: last line %q does not match", args, last)
		}
	}
}

func TestBenchGemmBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-dtype", "int8"},
		{"-n", "0"},
		{"-batch", "-1"},
		{"-threads", "-2"},
		{"extra"},
	} {
		var out bytes.Buffer
		err := runBenchGemm(context.Background(), args, &out)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
	var out bytes.Buffer
	var ue *usageError
	if err := runBenchGemm(context.Background(), []string{"-nosuchflag"}, &out); !errors.As(err, &ue) {
		t.Errorf("unknown flag: err = %v, want a usage error", err)
	}
}
