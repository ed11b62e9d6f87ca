package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// seriesColors are fixed per backend so every plot reads the same way.
var seriesColors = map[string]color.Color{
	"goferro": color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"numpy":   color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"torch":   color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// plot draws one PNG: for GEMM, GFLOP/s against n for every backend; for
// the instances, the peer/goferro ratio of every case (or goferro's time
// when no peer ran).
func (b *benchReport) plot(path string, gemmCases bool) error {
	var rs []benchResult
	for _, r := range b.results {
		if (r.GemmN > 0) == gemmCases && r.Error == "" && r.GoferroMS > 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return fmt.Errorf("no successful cases")
	}
	p := plot.New()
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Min = 0
	if gemmCases {
		p.Title.Text = "Square float64 GEMM"
		p.X.Label.Text = "n"
		p.Y.Label.Text = "GFLOP/s"
		for _, name := range append([]string{"goferro"}, b.peers...) {
			var pts plotter.XYs
			for _, r := range rs {
				ms := r.GoferroMS
				if name != "goferro" {
					var ok bool
					if ms, ok = r.PeerMS[name]; !ok {
						continue
					}
				}
				pts = append(pts, plotter.XY{X: float64(r.GemmN), Y: math.Pow(10, r.Log10Flops) / (ms * 1e6)})
			}
			if len(pts) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			l.Color, s.Color = seriesColors[name], seriesColors[name]
			p.Add(l, s)
			p.Legend.Add(name, l, s)
		}
		return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
	}
	// Horizontal bars, so long instance names read as plain text.
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	p.Legend.Left = false
	const barWidth = 6
	var series []string
	for _, peer := range b.peers {
		for _, r := range rs {
			if _, ok := r.PeerMS[peer]; ok {
				series = append(series, peer)
				break
			}
		}
	}
	top := 0.0
	addBars := func(vals plotter.Values, name string, k, n int) error {
		for _, v := range vals {
			top = max(top, v)
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(barWidth))
		if err != nil {
			return err
		}
		bars.Horizontal = true
		bars.Color = seriesColors[name]
		bars.Offset = vg.Points(barWidth * (float64(k) - float64(n-1)/2))
		p.Add(bars)
		if n > 1 || name != "goferro" {
			p.Legend.Add(name, bars)
		}
		return nil
	}
	if len(series) == 0 {
		p.Title.Text = "goferro einsum instances (no peers)"
		p.X.Label.Text = "median ms"
		vals := make(plotter.Values, len(rs))
		for i, r := range rs {
			vals[i] = r.GoferroMS
		}
		if err := addBars(vals, "goferro", 0, 1); err != nil {
			return err
		}
	} else {
		p.Title.Text = "Einsum instances: peer time / goferro time (right of 1: goferro faster)"
		p.X.Label.Text = "ratio"
		for k, peer := range series {
			vals := make(plotter.Values, len(rs))
			for i, r := range rs {
				if ms, ok := r.PeerMS[peer]; ok {
					vals[i] = ms / r.GoferroMS
				}
			}
			if err := addBars(vals, peer, k, len(series)); err != nil {
				return err
			}
		}
		one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(rs)) - 0.5}})
		if err != nil {
			return err
		}
		one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(one)
	}
	p.Y.Min = -0.5
	p.X.Min = 0
	p.X.Max = 1.25 * max(top, 1) // room for the legend at the right
	p.NominalY(names...)
	height := max(8, 0.5*float64(len(rs)*max(1, len(series)))+4)
	return p.Save(20*vg.Centimeter, vg.Length(height)*vg.Centimeter, path)
}
