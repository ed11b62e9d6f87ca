package isa

import (
	"errors"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		want string
		best Path
		got  Path
	}{
		{"", AVX512, AVX512}, {"avx512", AVX512, AVX512}, {"avx2", AVX512, AVX2},
		{"sse2", AVX512, SSE2}, {"generic", AVX512, Generic},
		{"avx512", AVX2, AVX2}, {"avx2", SSE2, SSE2}, {"sse2", Generic, Generic},
		{"AVX2", AVX512, AVX512}, {"sse", AVX512, AVX512}, // names are exact
		{"generic", Generic, Generic},
	} {
		if got := Choose(tc.want, tc.best); got != tc.got {
			t.Errorf("Choose(%q, %s) = %s, want %s", tc.want, tc.best, got, tc.got)
		}
	}
}

func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want error
	}{
		{"", nil}, {Active.String(), nil}, {"avx3", ErrUnknownPath},
	} {
		t.Setenv(Env, tc.env)
		if err := CheckEnv(); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("%s=%q: CheckEnv() = %v, want %v", Env, tc.env, err, tc.want)
		}
	}
	if Best < AVX512 {
		t.Setenv(Env, "avx512")
		if err := CheckEnv(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s=avx512 on a %s machine: CheckEnv() = %v, want ErrUnavailable", Env, Best, err)
		}
	}
}

func TestString(t *testing.T) {
	for p, want := range map[Path]string{Generic: "generic", SSE2: "sse2", AVX2: "avx2", AVX512: "avx512", 9: "Path(9)"} {
		if p.String() != want {
			t.Errorf("Path(%d).String() = %q, want %q", int(p), p.String(), want)
		}
	}
}

type fakeM struct{ ran bool }

func (m *fakeM) Run() int { m.ran = true; return 7 }

func TestRunTests(t *testing.T) {
	for _, tc := range []struct {
		env  string
		code int
		ran  bool
	}{
		{"", 7, true}, {Active.String(), 7, true}, {"avx3", 1, false},
	} {
		t.Setenv(Env, tc.env)
		m := &fakeM{}
		if code := RunTests(m); code != tc.code || m.ran != tc.ran {
			t.Errorf("%s=%q: RunTests = %d (ran %v), want %d (ran %v)", Env, tc.env, code, m.ran, tc.code, tc.ran)
		}
	}
	if Best < AVX512 {
		t.Setenv(Env, "avx512")
		if m := (&fakeM{}); RunTests(m) != 0 || m.ran {
			t.Errorf("%s=avx512 on a %s machine: ran the tests", Env, Best)
		}
	}
}
