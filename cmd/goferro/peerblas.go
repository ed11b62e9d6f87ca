package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// peerBLASScript reports the BLAS and LAPACK the peers run; bench/*.py run
// the same file, so every report records them alike.
//
//go:embed peerblas.py
var peerBLASScript []byte

// peerBLAS is what peerblas.py reports of one peer.
type peerBLAS struct {
	Version   string   `json:"version"`
	Libraries []string `json:"libraries"`
	Config    []string `json:"config"`
	BLAS      string   `json:"blas"`
	LAPACK    string   `json:"lapack"`
	Reference bool     `json:"reference"` // the BLAS is the reference (netlib) one
	Error     string   `json:"error"`
}

// ratioNote qualifies a ratio against the peer: a ratio against the
// reference BLAS, or an unknown one, never goes without saying so.
func (b peerBLAS) ratioNote() string {
	switch {
	case b.Reference:
		return "reference BLAS"
	case b.Error != "" || b.BLAS == "" || b.BLAS == "unknown":
		return "BLAS unknown"
	}
	return ""
}

// String describes the peer's BLAS and LAPACK for the report.
func (b peerBLAS) String() string {
	if b.Error != "" {
		return "BLAS unknown (" + b.Error + ")"
	}
	s := fmt.Sprintf("%s: BLAS %s, LAPACK %s", b.Version, b.BLAS, b.LAPACK)
	if len(b.Libraries) > 0 {
		s += " (" + strings.Join(b.Libraries, ", ") + ")"
	}
	if len(b.Config) > 0 {
		s += "; build: " + strings.Join(b.Config, "; ")
	}
	return s
}

// probePeerBLAS runs peerblas.py, written into dir, with python for the
// peers. With install, a peer on the reference BLAS makes it install
// Debian's OpenBLAS where it may (root, apt-get); note says what it did.
func probePeerBLAS(ctx context.Context, python, dir string, peers []string, install bool) (map[string]peerBLAS, string, error) {
	script := filepath.Join(dir, "peerblas.py")
	if err := os.WriteFile(script, peerBLASScript, 0o644); err != nil {
		return nil, "", err
	}
	args := []string{script}
	if install {
		args = append(args, "--install")
	}
	cmd := exec.CommandContext(ctx, python, append(args, peers...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("probing the peers' BLAS: %v: %s", err, lastLine(stderr.String()))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, "", fmt.Errorf("probing the peers' BLAS: %v", err)
	}
	blas := map[string]peerBLAS{}
	note := ""
	for key, v := range raw {
		if key == "install" {
			_ = json.Unmarshal(v, &note)
			continue
		}
		var b peerBLAS
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, "", fmt.Errorf("probing the peers' BLAS: %s: %v", key, err)
		}
		blas[key] = b
	}
	return blas, note, nil
}

// lastLine is the last non-empty line of s: the exception of a traceback.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
