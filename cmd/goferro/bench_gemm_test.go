package main

import (
	"regexp"
	"testing"
)

func TestBenchGemm(t *testing.T) {
	line := regexp.MustCompile(`^gemm dtype=(float64|float32|complex128|complex64) n=\d+ batch=\d+ threads=\d+ median_ms=[0-9.]+ gflops=[0-9.]+$`)
	checkBenchLines(t, runBenchGemm, line, [][]string{
		{"-n", "17", "-dtype", "float64", "-threads", "1", "-runs", "2"},
		{"-n", "8", "-dtype", "float32", "-threads", "2", "-batch", "3", "-runs", "1"},
		{"-n", "5", "-dtype", "complex128", "-runs", "1"},
		{"-n", "5", "-dtype", "complex64", "-runs", "1"},
	})
}

func TestBenchGemmBadFlags(t *testing.T) {
	checkBenchUsageErrors(t, runBenchGemm, [][]string{
		{"-dtype", "int8"},
		{"-n", "0"},
		{"-batch", "-1"},
		{"-threads", "-2"},
		{"extra"},
		{"-nosuchflag"},
	})
}
