package main

import (
	"regexp"
	"runtime"
	"testing"
)

func TestBenchPermute(t *testing.T) {
	line := regexp.MustCompile(`^permute dtype=(float32|float64|complex64|complex128) shape=[0-9x]+ perm=[0-9,-]+ clock=(wall|thread) isa=(avx512|avx2|sse2|generic) bytes=\d+ median_ms=[0-9.]+ copy_median_ms=[0-9.]+ gbps=[0-9.+Inf]+ copy_gbps=[0-9.+Inf]+ ratio_to_copy=[0-9.]+$`)
	cases := [][]string{
		{"-shape", "40,33", "-runs", "3"},
		{"-shape", "4,5,6,7,8", "-perm", "4,0,3,1,2", "-dtype", "float32", "-runs", "2"},
		{"-shape", "9,16", "-perm", "-1,0", "-dtype", "complex128", "-runs", "1"},
		{"-shape", "3,3", "-dtype", "complex64", "-runs", "1"},
	}
	if runtime.GOOS == "linux" { // the thread's CPU clock
		cases = append(cases, []string{"-shape", "64,48", "-dtype", "float32", "-runs", "3", "-clock", "thread"})
	}
	checkBenchLines(t, runBenchPermute, line, cases)
}

func TestBenchPermuteBadFlags(t *testing.T) {
	checkBenchUsageErrors(t, runBenchPermute, [][]string{
		{"-dtype", "int8"},
		{"-dtype", "int32"},
		{"-shape", "0,3"},
		{"-shape", "3,x"},
		{"-shape", "3,3", "-perm", "0,0"},
		{"-shape", "3,3", "-perm", "2,0"},
		{"-shape", "3,3", "-perm", "0"},
		{"-runs", "-1"},
		{"-clock", "cpu"},
		{"extra"},
		{"-nosuchflag"},
	})
}
