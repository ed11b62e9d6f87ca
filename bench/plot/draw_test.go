package main

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// mixedResults has ratios on both sides of 1, a peer over a cap it names,
// one over a cap it does not name, a peer error, a goferro error and GEMMs.
func mixedResults() []result {
	ok := func(peers ...string) map[string]string {
		m := map[string]string{}
		for _, p := range peers {
			m[p] = "ok"
		}
		return m
	}
	return []result{
		{Name: "fast", GoferroMS: 10, PeerMS: map[string]float64{"numpy": 40, "torch": 5}, PeerStatus: ok("numpy", "torch")},
		{Name: "slow", GoferroMS: 100, PeerMS: map[string]float64{"numpy": 50, "torch": 200}, PeerStatus: ok("numpy", "torch")},
		{Name: "capped", GoferroMS: 150, PeerMS: map[string]float64{"torch": 300},
			PeerStatus: map[string]string{"numpy": "over-cap-30s (time is a lower bound)", "torch": "ok"}},
		{Name: "unnamed_cap", GoferroMS: 10, PeerStatus: map[string]string{"numpy": "over-cap", "torch": "peers script: exit status 1: boom"}},
		{Name: "broken", Error: "einsum: bad path"},
		{Name: "gemm_f64_64", GemmN: 64, Log10Flops: math.Log10(2 * 64 * 64 * 64), GoferroMS: 0.1, PeerMS: map[string]float64{"numpy": 0.2}},
		{Name: "gemm_f64_128", GemmN: 128, Log10Flops: math.Log10(2 * 128 * 128 * 128), GoferroMS: 0.5, PeerMS: map[string]float64{"numpy": 0.4}},
	}
}

func TestRatioFigureOverCapAndBothSidesOfOne(t *testing.T) {
	rs := mixedResults()
	f, err := einsumFigure(rs, peersOf(rs))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.plot.X.Scale.(plot.LogScale); !ok {
		t.Errorf("ratio axis scale is %T, want plot.LogScale", f.plot.X.Scale)
	}
	if len(f.bars) != 2 {
		t.Fatalf("%d bar series, want numpy and torch", len(f.bars))
	}
	numpy, torch := f.bars[0], f.bars[1]
	// Cases in order: fast, slow, capped, unnamed_cap (broken is left out).
	wantRatio := [][]float64{{4, 0.5, 200, 0}, {0.5, 2, 2, 0}}
	wantOver := [][]bool{{false, false, true, true}, {false, false, false, false}}
	for k, b := range []*ratioBars{numpy, torch} {
		for i := range wantRatio[k] {
			if math.Abs(b.ratio[i]-wantRatio[k][i]) > 1e-12 || b.overCap[i] != wantOver[k][i] {
				t.Errorf("series %d case %d: ratio %v over cap %v, want %v %v", k, i, b.ratio[i], b.overCap[i], wantRatio[k][i], wantOver[k][i])
			}
		}
	}
	if n := numpy.note[2]; !strings.Contains(n, "≥ 200") || !strings.Contains(n, "30 s cap") {
		t.Errorf("note of the capped case %q, want the lower bound and the cap", n)
	}
	if n := numpy.note[3]; n != "over the time cap" {
		t.Errorf("note of a cap without a number %q", n)
	}
	for i, n := range torch.note {
		if n != "" {
			t.Errorf("torch case %d has note %q, but it was never over the cap", i, n)
		}
	}
	// The axis spans every bar, the lower bound included, and marks 1.
	if f.plot.X.Min >= 0.5 || f.plot.X.Max <= 200 {
		t.Errorf("x axis [%v, %v] does not span the ratios 0.5…200", f.plot.X.Min, f.plot.X.Max)
	}
	if !hasTick(f.plot.X.Tick.Marker.Ticks(f.plot.X.Min, f.plot.X.Max), 1, "1") {
		t.Errorf("the ratio axis does not label 1")
	}

	// Drawn, the bars have the series color, bars below 1 extend to the
	// left, and the over-cap bar has the pale tint, not the solid color.
	img, at := render(t, f)
	x1 := func(b *ratioBars, i int) (vg.Length, vg.Length) { return at(1, i, b), at(b.ratio[i], i, b) }
	checks := []struct {
		what string
		b    *ratioBars
		i    int
		want color.RGBA
	}{
		{"numpy 4", numpy, 0, colorOf("numpy")},
		{"torch 0.5", torch, 0, colorOf("torch")},
		{"numpy 0.5", numpy, 1, colorOf("numpy")},
		{"numpy over the cap", numpy, 2, tint(colorOf("numpy"))},
		{"torch 2", torch, 2, colorOf("torch")},
	}
	for _, c := range checks {
		from, to := x1(c.b, c.i)
		if c.b.ratio[c.i] < 1 && to >= from {
			t.Errorf("%s: bar does not extend left of 1", c.what)
		}
		y := at(-1, c.i, c.b) // the bar's centre line
		if got := pixel(img, (from+to)/2, y); got != c.want {
			t.Errorf("%s: bar colour %v, want %v", c.what, got, c.want)
		}
	}
}

// hasTick reports whether ticks has a mark at v labelled label.
func hasTick(ticks []plot.Tick, v float64, label string) bool {
	for _, tk := range ticks {
		if tk.Value == v && tk.Label == label {
			return true
		}
	}
	return false
}

// render draws the figure at 96 dpi and returns the image and a function
// giving, for a ratio and case of a series, the x position (or, for a
// ratio of -1, the y position of the bar's centre line) in points.
func render(t *testing.T, f figure) (image.Image, func(v float64, i int, b *ratioBars) vg.Length) {
	t.Helper()
	c := vgimg.New(f.width, f.height)
	dc := draw.New(c)
	f.plot.Draw(dc)
	data := f.plot.DataCanvas(dc)
	trX, trY := f.plot.Transforms(&data)
	return c.Image(), func(v float64, i int, b *ratioBars) vg.Length {
		if v < 0 {
			return trY(float64(i)) + b.offset
		}
		return trX(v)
	}
}

// pixel is the colour at a point (in points, origin bottom left).
func pixel(img image.Image, x, y vg.Length) color.RGBA {
	h := img.Bounds().Dy()
	px, py := int(x.Dots(vgimg.DefaultDPI)), h-1-int(y.Dots(vgimg.DefaultDPI))
	return color.RGBAModel.Convert(img.At(px, py)).(color.RGBA)
}

func TestEinsumFigureWithoutPeersDrawsTimes(t *testing.T) {
	rs := []result{{Name: "a", GoferroMS: 3}, {Name: "b", GoferroMS: 7}}
	f, err := einsumFigure(rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.bars != nil || f.plot.X.Label.Text != "median ms" {
		t.Errorf("without peers: bars %v, x label %q; want goferro's times", f.bars, f.plot.X.Label.Text)
	}
	if _, err := f.plot.WriterTo(f.width, f.height, "png"); err != nil {
		t.Error(err)
	}
}

func TestFiguresWithoutCases(t *testing.T) {
	rs := []result{{Name: "broken", Error: "x"}, {Name: "zero", GoferroMS: 0}, {Name: "negative", GoferroMS: -1}}
	for name, mk := range map[string]func([]result, []string) (figure, error){"einsum": einsumFigure, "gemm": gemmFigure} {
		if _, err := mk(rs, []string{"numpy"}); err != errNoCases {
			t.Errorf("%s: %v, want errNoCases", name, err)
		}
	}
}

func TestBadPeerTimesAreLeftOut(t *testing.T) {
	rs := []result{{Name: "a", GoferroMS: 1, PeerMS: map[string]float64{"numpy": 0, "torch": -3}}}
	f, err := einsumFigure(rs, peersOf(rs))
	if err != nil {
		t.Fatal(err)
	}
	if f.bars != nil {
		t.Errorf("peers with no usable time got ratio bars")
	}
}

func TestGemmFigure(t *testing.T) {
	rs := mixedResults()
	f, err := gemmFigure(rs, peersOf(rs))
	if err != nil {
		t.Fatal(err)
	}
	if f.plot.X.Min != 64 || f.plot.X.Max != 128 {
		t.Errorf("n axis [%v, %v], want [64, 128]", f.plot.X.Min, f.plot.X.Max)
	}
	// goferro at n=64: 2·64³ flops in 0.1 ms is 5.24 GFLOP/s; numpy at
	// n=128 in 0.4 ms: 10.5 GFLOP/s, the top of the axis.
	if want := 2 * 128 * 128 * 128 / 0.4e6; math.Abs(f.plot.Y.Max-want) > 1e-9*want {
		t.Errorf("GFLOP/s axis top %v, want %v", f.plot.Y.Max, want)
	}
}

func TestRatioTicks(t *testing.T) {
	labels := func(ticks []plot.Tick) string {
		var s []string
		for _, tk := range ticks {
			if tk.Label != "" {
				s = append(s, tk.Label)
			}
		}
		return strings.Join(s, " ")
	}
	if got := labels(ratioTicks{}.Ticks(0.3, 30)); got != "0.5 1 2 5 10 20" {
		t.Errorf("ticks over two decades labelled %q", got)
	}
	wide := ratioTicks{}.Ticks(0.2, 20000)
	if got := labels(wide); got != "1 10 100 1000 10000" {
		t.Errorf("ticks over five decades labelled %q", got)
	}
	if len(wide) <= 5 {
		t.Errorf("wide axis has no unlabelled marks at 2 and 5")
	}
	for _, r := range [][2]float64{{0, 10}, {-1, 5}, {5, 1}, {1, math.Inf(1)}, {math.NaN(), 2}} {
		if got := (ratioTicks{}).Ticks(r[0], r[1]); got != nil {
			t.Errorf("Ticks(%v, %v) = %v, want none", r[0], r[1], got)
		}
	}
}

func TestOverCap(t *testing.T) {
	cases := []struct {
		status string
		capMS  float64
		over   bool
	}{
		{"over-cap-30s (time is a lower bound)", 30000, true},
		{"over-cap-2.5s", 2500, true},
		{"over-cap", 0, true},
		{"over-cap-soon", 0, true},
		{"over-cap-NaNs", 0, true},
		{"over-cap-Infs", 0, true},
		{"over-cap--3s", 0, true},
		{"ok", 0, false},
		{"runs-capped-2", 0, false},
	}
	for _, c := range cases {
		r := result{PeerStatus: map[string]string{"numpy": c.status}}
		capMS, over := r.overCap("numpy")
		if capMS != c.capMS || over != c.over {
			t.Errorf("%q: %v %v, want %v %v", c.status, capMS, over, c.capMS, c.over)
		}
	}
	if _, over := (result{}).overCap("numpy"); over {
		t.Error("a case without status is over the cap")
	}
}

func TestPeersOf(t *testing.T) {
	rs := []result{
		{PeerMS: map[string]float64{"torch": 1, "jax": 2}},
		{PeerStatus: map[string]string{"numpy": "over-cap-1s", "cupy": "ok"}},
	}
	if got := fmt.Sprint(peersOf(rs)); got != "[numpy torch cupy jax]" {
		t.Errorf("peersOf = %s", got)
	}
}

// TestDocsPlotsReproducible checks that docs/benchmarks/*.png are what the
// drawing code makes of docs/benchmarks/results.json (pixel for pixel up to
// a little rasterisation noise), so the committed plots match the data.
func TestDocsPlotsReproducible(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "benchmarks")
	rs, err := loadResults(filepath.Join(dir, "results.json"))
	if os.IsNotExist(err) {
		t.Skip("no docs/benchmarks/results.json")
	}
	if err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func([]result, []string) (figure, error){"einsum.png": einsumFigure, "gemm.png": gemmFigure} {
		f, err := mk(rs, peersOf(rs))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := vgimg.PngCanvas{Canvas: vgimg.New(f.width, f.height)}
		f.plot.Draw(draw.New(c))
		got := c.Image()
		want := readPNG(t, filepath.Join(dir, name))
		if got.Bounds() != want.Bounds() {
			t.Errorf("%s is %v, the drawing code makes %v: redraw with go run -C bench/plot . ../../docs/benchmarks", name, want.Bounds(), got.Bounds())
			continue
		}
		diff, b := 0, got.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if color.RGBAModel.Convert(got.At(x, y)) != color.RGBAModel.Convert(want.At(x, y)) {
					diff++
				}
			}
		}
		if diff > b.Dx()*b.Dy()/1000 {
			t.Errorf("%s differs from what the drawing code makes of results.json in %d pixels: redraw with go run -C bench/plot . ../../docs/benchmarks", name, diff)
		}
	}
}
