package graph

import (
	"encoding/json"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load: it must return a program or an
// error, never panic, and whatever loads must round-trip.
func FuzzLoad(f *testing.F) {
	for _, p := range []*Program{base(&testing.T{}), richProgram(&testing.T{})} {
		js, _ := json.Marshal(p)
		f.Add(js)
	}
	f.Add([]byte(`{"format":"goferro.program.v1","inputs":[],"instructions":[],"outputs":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Load(data)
		if err != nil {
			return
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal of a loaded program: %v", err)
		}
		q, err := Load(js)
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if q.Fingerprint() != p.Fingerprint() {
			t.Fatal("fingerprint changed on reload")
		}
		_ = p.String()
	})
}
