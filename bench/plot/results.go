package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// result is one case of the results.json that "goferro bench --out DIR"
// writes: the fields the plots need, read with their own types so that this
// module needs nothing from goferro.
type result struct {
	Name       string             `json:"name"`
	GemmN      int                `json:"gemm_n"`
	Log10Flops float64            `json:"log10_flops"`
	GoferroMS  float64            `json:"goferro_ms"`
	PeerMS     map[string]float64 `json:"peer_ms"`
	PeerStatus map[string]string  `json:"peer_status"`
	Error      string             `json:"error"`
}

// loadResults reads a results.json file.
func loadResults(path string) ([]result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []result
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("%s is not a goferro bench results file: %v", path, err)
	}
	return rs, nil
}

// succeeded returns the cases of one kind (GEMM or einsum instance) that
// goferro ran: no error and a positive time. These are the cases a plot
// shows, and goferro bench links a plot only when there is one.
func succeeded(rs []result, gemmCases bool) []result {
	var out []result
	for _, r := range rs {
		if (r.GemmN > 0) == gemmCases && r.Error == "" && r.GoferroMS > 0 {
			out = append(out, r)
		}
	}
	return out
}

// knownPeers are the peers in the order the report lists them.
var knownPeers = []string{"numpy", "torch"}

// peersOf lists the peers that appear in the results, with a time or a
// status: numpy and torch first, then any others by name.
func peersOf(rs []result) []string {
	seen := map[string]bool{}
	for _, r := range rs {
		for p := range r.PeerMS {
			seen[p] = true
		}
		for p := range r.PeerStatus {
			seen[p] = true
		}
	}
	var out, others []string
	for _, p := range knownPeers {
		if seen[p] {
			out = append(out, p)
			delete(seen, p)
		}
	}
	for p := range seen {
		others = append(others, p)
	}
	slices.Sort(others)
	return append(out, others...)
}

// peerTime is the peer's median time of the case when it has a usable
// one.
func (r result) peerTime(peer string) (float64, bool) {
	ms, ok := r.PeerMS[peer]
	return ms, ok && ms > 0
}

// overCap reports whether the peer stopped at the time cap on this case
// (einsum-peers.py reports "over-cap-30s (time is a lower bound)"; goferro
// bench then records no time), and the cap in milliseconds when the status
// names it (0 otherwise).
func (r result) overCap(peer string) (capMS float64, over bool) {
	st, ok := r.PeerStatus[peer]
	if !ok || !strings.HasPrefix(st, "over-cap") {
		return 0, false
	}
	rest, _ := strings.CutPrefix(st, "over-cap-")
	secs, _, found := strings.Cut(rest, "s")
	if !found {
		return 0, true
	}
	s, err := strconv.ParseFloat(secs, 64)
	if err != nil || !(s > 0) || math.IsInf(s, 1) { // !(s > 0) also rejects NaN
		return 0, true
	}
	return s * 1e3, true
}
