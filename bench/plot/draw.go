package main

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// errNoCases is returned for a plot whose kind of case never ran.
var errNoCases = errors.New("no successful cases")

// seriesColors are fixed per backend so every plot reads the same way.
var seriesColors = map[string]color.RGBA{
	"goferro": {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"numpy":   {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"torch":   {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// otherColor is the color of a backend without a fixed one.
var otherColor = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}

// colorOf is the backend's series color.
func colorOf(name string) color.RGBA {
	if c, ok := seriesColors[name]; ok {
		return c
	}
	return otherColor
}

// tint is c mixed with white: the fill of a bar over the time cap.
func tint(c color.RGBA) color.RGBA {
	mix := func(v uint8) uint8 { return v + uint8(0.7*float64(255-v)) }
	return color.RGBA{R: mix(c.R), G: mix(c.G), B: mix(c.B), A: 0xff}
}

// dashed is the outline of a bar over the time cap.
func dashed(c color.Color) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
}

// figure is a plot and the size to save it at.
type figure struct {
	plot          *plot.Plot
	width, height vg.Length
	// bars are the einsum ratio plot's bars, one per peer in legend order
	// (nil for the other plots).
	bars []*ratioBars
}

// save writes the figure to a file; the extension gives the format.
func (f figure) save(path string) error {
	return f.plot.Save(f.width, f.height, path)
}

// gemmFigure draws GFLOP/s against n for goferro and every peer.
func gemmFigure(all []result, peers []string) (figure, error) {
	rs := succeeded(all, true)
	if len(rs) == 0 {
		return figure{}, errNoCases
	}
	p := plot.New()
	p.Title.Text = "Square float64 GEMM"
	p.X.Label.Text = "n"
	p.Y.Label.Text = "GFLOP/s"
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Min = 0
	for _, name := range append([]string{"goferro"}, peers...) {
		var pts plotter.XYs
		for _, r := range rs {
			ms := r.GoferroMS
			if name != "goferro" {
				var ok bool
				if ms, ok = r.peerTime(name); !ok {
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
			return figure{}, err
		}
		l.Color, s.Color = colorOf(name), colorOf(name)
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	return figure{plot: p, width: 16 * vg.Centimeter, height: 10 * vg.Centimeter}, nil
}

// einsumFigure draws the einsum instances as horizontal bars, so long
// instance names read as plain text: the peer/goferro ratio of every case,
// or goferro's time when no peer ran.
func einsumFigure(all []result, peers []string) (figure, error) {
	rs := succeeded(all, false)
	if len(rs) == 0 {
		return figure{}, errNoCases
	}
	var series []string
	for _, peer := range peers {
		for _, r := range rs {
			_, timed := r.peerTime(peer)
			_, over := r.overCap(peer)
			if timed || over {
				series = append(series, peer)
				break
			}
		}
	}
	if len(series) == 0 {
		return timesFigure(rs)
	}
	return ratioFigure(rs, series)
}

// barWidth is the thickness of one bar of the einsum plots.
const barWidth = vg.Length(6)

// rowHeight is the height of one case's row per bar in it.
const rowHeight = 0.5 * vg.Centimeter

// names are the cases' names, for the nominal axis.
func names(rs []result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// timesFigure draws goferro's median time of every case on a linear axis.
func timesFigure(rs []result) (figure, error) {
	p := plot.New()
	p.Title.Text = "goferro einsum instances (no peers)"
	p.X.Label.Text = "median ms"
	vals := make(plotter.Values, len(rs))
	top := 0.0
	for i, r := range rs {
		vals[i] = r.GoferroMS
		top = max(top, r.GoferroMS)
	}
	bars, err := plotter.NewBarChart(vals, barWidth)
	if err != nil {
		return figure{}, err
	}
	bars.Horizontal = true
	bars.Color = colorOf("goferro")
	p.Add(bars)
	p.X.Min, p.X.Max = 0, 1.05*top
	p.Y.Min = -0.5
	p.NominalY(names(rs)...)
	height := max(8*vg.Centimeter, rowHeight*vg.Length(len(rs))+4*vg.Centimeter)
	return figure{plot: p, width: 20 * vg.Centimeter, height: height}, nil
}

// ratioFigure draws peer time / goferro time for every case and peer on a
// logarithmic axis, bars starting at a dashed line at 1. A case where the
// peer stopped at the time cap gets a pale, dash-outlined bar to its lower
// bound (cap / goferro time) and a note saying so.
func ratioFigure(rs []result, series []string) (figure, error) {
	p := plot.New()
	p.Title.Text = "Einsum instances: peer time / goferro time (right of 1: goferro faster)"
	p.X.Label.Text = "ratio (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ratioTicks{}
	noteStyle := p.X.Tick.Label
	noteStyle.Font.Size = vg.Points(9)
	noteStyle.XAlign, noteStyle.YAlign = draw.XLeft, draw.YCenter

	anyNote := false
	var bars []*ratioBars
	for k, peer := range series {
		b := &ratioBars{
			ratio:     make([]float64, len(rs)),
			overCap:   make([]bool, len(rs)),
			note:      make([]string, len(rs)),
			color:     colorOf(peer),
			width:     barWidth,
			offset:    barWidth * vg.Length(float64(k)-float64(len(series)-1)/2),
			noteStyle: noteStyle,
		}
		for i, r := range rs {
			if capMS, over := r.overCap(peer); over {
				b.overCap[i] = true
				b.note[i] = "over the time cap"
				if capMS > 0 {
					b.ratio[i] = capMS / r.GoferroMS
					b.note[i] = fmt.Sprintf("≥ %.3g: %s over the %g s cap", b.ratio[i], peer, capMS/1e3)
				}
				anyNote = true
			} else if ms, ok := r.peerTime(peer); ok {
				b.ratio[i] = ms / r.GoferroMS
			}
		}
		bars = append(bars, b)
		p.Add(b)
		p.Legend.Add(peer, b)
	}
	if anyNote {
		p.Legend.Add("over the time cap (bar: lower bound)", overCapThumb{})
	}

	// Room around the bars, and at the right for the notes.
	p.X.Min /= 1.5
	p.X.Max *= 1.5
	if anyNote {
		p.X.Max *= math.Sqrt(p.X.Max / p.X.Min)
	}
	// Rows above the cases for the legend, so it covers no bar.
	perCase := rowHeight * vg.Length(len(series))
	entries := len(series)
	if anyNote {
		entries++
	}
	spare := math.Ceil(float64(entries) * 0.55 * float64(vg.Centimeter) / float64(perCase))
	p.Y.Min, p.Y.Max = -0.5, float64(len(rs))-0.5+spare
	p.Legend.Top = true

	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: p.Y.Min}, {X: 1, Y: float64(len(rs)) - 0.5}})
	if err != nil {
		return figure{}, err
	}
	one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(one)
	p.NominalY(names(rs)...)
	height := max(8*vg.Centimeter, perCase*vg.Length(float64(len(rs))+spare)+4*vg.Centimeter)
	return figure{plot: p, width: 20 * vg.Centimeter, height: height, bars: bars}, nil
}

// ratioBars draws one peer's ratios as horizontal bars from 1 to the ratio,
// case i at y = i, on a logarithmic x axis (where a bar chart, which starts
// at 0, cannot be drawn). A bar over the time cap is pale with a dashed
// outline, and its note follows it.
type ratioBars struct {
	ratio     []float64 // per case; 0 where the peer has no bar
	overCap   []bool    // per case: the peer stopped at the time cap
	note      []string  // per case: text after the bar
	color     color.RGBA
	width     vg.Length // thickness of a bar
	offset    vg.Length // vertical shift from the case's row
	noteStyle text.Style
}

// Plot draws the bars and notes (plot.Plotter).
func (b *ratioBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.ratio {
		y := trY(float64(i)) + b.offset
		x0, x1 := trX(1), trX(1)
		if v > 0 {
			x1 = trX(v)
			fill, line := color.Color(b.color), plotter.DefaultLineStyle
			if b.overCap[i] {
				fill, line = tint(b.color), dashed(b.color)
			}
			pts := []vg.Point{{X: x0, Y: y - b.width/2}, {X: x0, Y: y + b.width/2}, {X: x1, Y: y + b.width/2}, {X: x1, Y: y - b.width/2}}
			c.FillPolygon(fill, c.ClipPolygonX(pts))
			c.StrokeLines(line, c.ClipLinesX(append(pts, pts[0]))...)
		}
		if b.note[i] != "" {
			c.FillText(b.noteStyle, vg.Point{X: max(x0, x1) + vg.Points(3), Y: y}, b.note[i])
		}
	}
}

// DataRange spans 1 and every bar (plot.DataRanger).
func (b *ratioBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = 1, 1
	for _, v := range b.ratio {
		if v > 0 {
			xmin, xmax = min(xmin, v), max(xmax, v)
		}
	}
	return xmin, xmax, 0, float64(len(b.ratio) - 1)
}

// Thumbnail draws the legend's sample of a bar (plot.Thumbnailer).
func (b *ratioBars) Thumbnail(c *draw.Canvas) {
	pts := corners(c.Rectangle)
	c.FillPolygon(b.color, pts)
	c.StrokeLines(plotter.DefaultLineStyle, append(pts, pts[0]))
}

// overCapThumb is the legend's sample of a bar over the time cap.
type overCapThumb struct{}

// Thumbnail draws a pale, dash-outlined bar (plot.Thumbnailer).
func (overCapThumb) Thumbnail(c *draw.Canvas) {
	pts := corners(c.Rectangle)
	c.FillPolygon(tint(otherColor), pts)
	c.StrokeLines(dashed(otherColor), append(pts, pts[0]))
}

// corners are a rectangle's corners, counterclockwise.
func corners(r vg.Rectangle) []vg.Point {
	return []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
}

// ratioTicks marks a logarithmic ratio axis at 1, 2 and 5 times the powers
// of ten, labelling only the powers of ten when the axis spans more than
// three decades; 1 is always in range, so always marked and labelled.
type ratioTicks struct{}

// Ticks returns the marks between min and max (plot.Ticker).
func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max >= min) || math.IsInf(max, 1) {
		return nil
	}
	wide := math.Log10(max/min) > 3
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(min))); e <= int(math.Ceil(math.Log10(max))); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow10(e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || !wide {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
