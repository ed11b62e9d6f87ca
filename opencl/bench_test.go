package opencl

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/tensor"
)

// BenchmarkGemm measures square GEMM of every dtype the device runs,
// reporting GFLOP/s (real flops: 8 per complex multiply-add).
func BenchmarkGemm(b *testing.B) {
	q := testQueue(b)
	for _, dt := range gemmDTypes(q) {
		for _, n := range []int{128, 256, 512, 1024} {
			b.Run(fmt.Sprintf("%v/%d", dt, n), func(b *testing.B) {
				ha, _ := tensor.Rand(tensor.NewRNG(1), dt, n, n)
				flops := 2 * float64(n) * float64(n) * float64(n)
				if dt.IsComplex() {
					flops *= 4 // a complex multiply-add is 8 real flops
				}
				benchGemm(b, q, ha, n, flops)
			})
		}
	}
}

// benchGemm measures the n×n product of the host matrix ha with itself on
// the device, reporting GFLOP/s of flops per product.
func benchGemm(b *testing.B, q *Queue, ha *tensor.Tensor, n int, flops float64) {
	ctx := context.Background()
	dt := ha.DType()
	a, err := q.Upload(ctx, ha)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Release()
	c := mustEmpty(b, q, dt, n, n)
	m := func(t *Tensor) Matrix { return Matrix{Buf: t.Buffer(), RowStride: n, ColStride: 1} }
	gemm := func() {
		if _, err := q.Gemm(ctx, dt, nil, n, n, n, 1, 0, m(a), m(a), m(c)); err != nil {
			b.Fatal(err)
		}
	}
	gemm()
	q.Finish(ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gemm()
	}
	if err := q.Finish(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkBatchedGemm measures many small products in one launch.
func BenchmarkBatchedGemm(b *testing.B) {
	q := testQueue(b)
	ctx := context.Background()
	const batch, n = 256, 32
	ha, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, batch, n, n)
	a, _ := q.Upload(ctx, ha)
	defer a.Release()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := q.MatMul(ctx, a, a)
		if err != nil {
			b.Fatal(err)
		}
		c.Release()
	}
	q.Finish(ctx)
	b.ReportMetric(2*n*n*n*batch*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkTransfer measures host→device and device→host copies of 64 MiB.
func BenchmarkTransfer(b *testing.B) {
	q := testQueue(b)
	ctx := context.Background()
	h, _ := tensor.Zeros(tensor.Float32, 16<<20)
	b.Run("HostToDevice", func(b *testing.B) {
		b.SetBytes(64 << 20)
		for i := 0; i < b.N; i++ {
			d, err := q.Upload(ctx, h)
			if err != nil {
				b.Fatal(err)
			}
			d.Release()
		}
	})
	d, _ := q.Upload(ctx, h)
	defer d.Release()
	b.Run("UploadInto", func(b *testing.B) {
		b.SetBytes(64 << 20)
		for i := 0; i < b.N; i++ {
			if err := q.UploadInto(ctx, d, h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DownloadInto", func(b *testing.B) {
		b.SetBytes(64 << 20)
		for i := 0; i < b.N; i++ {
			if err := q.DownloadInto(ctx, h, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DeviceToHost", func(b *testing.B) {
		b.SetBytes(64 << 20)
		for i := 0; i < b.N; i++ {
			if _, err := q.Download(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	// ZerosInto-vs-Download times three downloads an iteration, side by
	// side in one run: into a new zeroed tensor (what Download did before
	// it mapped CPU devices' memory), with Download, and with DownloadInto
	// into the same tensor each time; it reports the median of each.
	b.Run("ZerosInto-vs-Download", func(b *testing.B) {
		var zi, dl, in []float64
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			z, err := tensor.Zeros(d.DType(), d.Shape()...)
			if err == nil {
				err = q.DownloadInto(ctx, z, d)
			}
			t1 := time.Now()
			_, err2 := q.Download(ctx, d)
			t2 := time.Now()
			err3 := q.DownloadInto(ctx, h, d)
			if err != nil || err2 != nil || err3 != nil {
				b.Fatal(err, err2, err3)
			}
			zi, dl, in = append(zi, t1.Sub(t0).Seconds()), append(dl, t2.Sub(t1).Seconds()), append(in, time.Since(t2).Seconds())
		}
		b.ReportMetric(median(zi)*1e3, "zeros+into-ms")
		b.ReportMetric(median(dl)*1e3, "download-ms")
		b.ReportMetric(median(in)*1e3, "into-ms")
	})
	// Memcpy is the host's own copy bandwidth for the same bytes, the
	// yardstick for the transfers above.
	b.Run("Memcpy", func(b *testing.B) {
		src, _ := tensor.Buffer[float32](h)
		dst := make([]float32, len(src))
		b.SetBytes(64 << 20)
		for i := 0; i < b.N; i++ {
			copy(dst, src)
		}
	})
	b.Run("DeviceToDevice", func(b *testing.B) {
		b.SetBytes(64 << 20)
		for i := 0; i < b.N; i++ {
			x, err := DeviceToDevice(ctx, q, d)
			if err != nil {
				b.Fatal(err)
			}
			x.Wait(ctx)
			x.Release()
		}
	})
}

// BenchmarkBinary measures a broadcasting float32 add.
func BenchmarkBinary(b *testing.B) {
	q := testQueue(b)
	ctx := context.Background()
	ha, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 1024, 1024)
	hb, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float32, 1024)
	a, _ := q.Upload(ctx, ha)
	bb, _ := q.Upload(ctx, hb)
	defer a.Release()
	defer bb.Release()
	out := mustEmpty(b, q, tensor.Float32, 1024, 1024)
	b.SetBytes(3 * 4 << 20)
	for i := 0; i < b.N; i++ {
		q.BinaryInto(ctx, Add, out, a, bb)
	}
	q.Finish(ctx)
}

// BenchmarkLaunchOverhead measures enqueueing a tiny elementwise kernel and
// waiting for it: the per-step cost for networks of small contractions.
func BenchmarkLaunchOverhead(b *testing.B) {
	q := testQueue(b)
	ctx := context.Background()
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, 16)
	a, _ := q.Upload(ctx, h)
	defer a.Release()
	out := mustEmpty(b, q, tensor.Float32, 16)
	b.Run("enqueue", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			q.BinaryInto(ctx, Add, out, a, a)
		}
		q.Finish(ctx)
	})
	b.Run("enqueue+wait", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ev, _ := q.BinaryInto(ctx, Add, out, a, a)
			ev.Wait(ctx)
		}
	})
}

// BenchmarkGemmVsCPU runs the same square float32 and float64 products on
// the device and with the CPU engine's GEMM (cpu/gemm) in one run, so their
// GFLOP/s compare side by side.
func BenchmarkGemmVsCPU(b *testing.B) {
	q := testQueue(b)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		if !slices.Contains(gemmDTypes(q), dt) {
			continue
		}
		for _, n := range []int{256, 512, 1024} {
			flops := 2 * float64(n) * float64(n) * float64(n)
			ha, _ := tensor.Rand(tensor.NewRNG(1), dt, n, n)
			b.Run(fmt.Sprintf("opencl/%v/%d", dt, n), func(b *testing.B) { benchGemm(b, q, ha, n, flops) })
			b.Run(fmt.Sprintf("cpu/%v/%d", dt, n), func(b *testing.B) {
				switch dt {
				case tensor.Float32:
					cpuGemm[float32](b, ha, n)
				case tensor.Float64:
					cpuGemm[float64](b, ha, n)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func cpuGemm[T gemm.Scalar](b *testing.B, ha *tensor.Tensor, n int) {
	a, _ := tensor.Buffer[T](ha)
	c := make([]T, n*n)
	m := func(d []T) gemm.Matrix[T] { return gemm.Matrix[T]{Data: d, RowStride: n, ColStride: 1} }
	for i := 0; i < b.N; i++ {
		if err := gemm.Gemm(nil, n, n, n, 1, m(a), m(a), 0, m(c)); err != nil {
			b.Fatal(err)
		}
	}
}

// median returns the median of x (x is reordered).
func median(x []float64) float64 {
	slices.Sort(x)
	n := len(x)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}
