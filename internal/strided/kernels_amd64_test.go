//go:build amd64 && !purego && !goferro_noasm

package strided

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestKernels calls the in-register transposes of every path this CPU
// runs directly: 0 to 3 blocks, source rows and destination rows padded
// or walked backwards (negative strides), destination rows in groups
// further apart than 8 rows, misaligned destinations for the cached
// stores and 64-byte aligned ones (lines apart) for the non-temporal
// ones. Each result is compared element by element with the kernel's
// definition, over the whole buffer, so a store outside the rows it
// names fails too.
func TestKernels(t *testing.T) {
	for _, ks := range paths() {
		if ks.t4 == nil {
			continue
		}
		t.Run(ks.name, func(t *testing.T) {
			for _, nt := range []int{0, 1} {
				for m := range 4 { // blocks
					for _, sp := range []int{0, 1, 16} {
						for _, dp := range []int{0, 16, 32} {
							if nt == 0 {
								dp += 3 // rows apart by any number of elements
							}
							for _, sign := range []int{1, -1} {
								testKernel4(t, ks, nt, m, sp, dp, sign)
								testKernel8(t, ks, nt, m, sp, dp, sign)
								testKernel16(t, ks, nt, m, sp, dp, sign)
								testGroup16(t, ks, nt, m, sp, dp, sign)
								testRuns32(t, ks, nt, m, sp, dp, sign)
							}
						}
					}
				}
			}
		})
	}
}

// testKernel4 checks t4 on m 16×16 blocks of 4-byte elements: 16 source
// rows of 16m elements, sp apart beyond that, and 16m destination rows
// of 16 elements, dp apart beyond that, in groups of 8 a further dp
// apart; sign -1 walks both the source rows and the destination rows
// backwards.
func testKernel4(t *testing.T, ks *kernelSet, nt, m, sp, dp, sign int) {
	n := 16 * m
	sb, db := sign*(n+sp), sign*(16+dp)
	gs := 8*db + sign*dp
	walk := func(visit func(d, s int)) {
		for i := range n {
			for j := range 16 {
				visit(i/8*gs+i%8*db+j, j*sb+i)
			}
		}
	}
	testKernel(t, fmt.Sprintf("%s t4 nt=%d n=%d sb=%d db=%d gs=%d", ks.name, nt, n, sb, db, gs), nt,
		func(i int) uint32 { return uint32(i) }, walk, func(dst, src unsafe.Pointer) {
			ks.t4(dst, 4*db, 4*gs, src, 4*sb, n, nt)
		})
}

// testKernel8 is testKernel4 for t8: m 8×8 blocks of 8-byte elements.
func testKernel8(t *testing.T, ks *kernelSet, nt, m, sp, dp, sign int) {
	n := 8 * m
	dp /= 2
	sb, db := sign*(n+sp), sign*(8+dp)
	gs := 8*db + sign*dp
	walk := func(visit func(d, s int)) {
		for i := range n {
			for j := range 8 {
				visit(i/8*gs+i%8*db+j, j*sb+i)
			}
		}
	}
	testKernel(t, fmt.Sprintf("%s t8 nt=%d n=%d sb=%d db=%d gs=%d", ks.name, nt, n, sb, db, gs), nt,
		func(i int) uint64 { return uint64(i) << 20 }, walk, func(dst, src unsafe.Pointer) {
			ks.t8(dst, 8*db, 8*gs, src, 8*sb, n, nt)
		})
}

// testKernel16 checks t16 on m 4×4 blocks of 16-byte elements: 4 source
// rows of 4m elements and 4m destination rows of 4.
func testKernel16(t *testing.T, ks *kernelSet, nt, m, sp, dp, sign int) {
	n := 4 * m
	dp /= 4
	sb, db := sign*(n+sp), sign*(4+dp)
	walk := func(visit func(d, s int)) {
		for i := range n {
			for j := range 4 {
				visit(i*db+j, j*sb+i)
			}
		}
	}
	testKernel(t, fmt.Sprintf("%s t16 nt=%d n=%d sb=%d db=%d", ks.name, nt, n, sb, db), nt,
		func(i int) [2]uint64 { return [2]uint64{uint64(i), ^uint64(i)} }, walk, func(dst, src unsafe.Pointer) {
			ks.t16(dst, 16*db, src, 16*sb, n, nt)
		})
}

// testGroup16 checks group16 on 4m columns of 8 16-byte elements, sp
// apart beyond that, and 8 destination rows of 4m elements.
func testGroup16(t *testing.T, ks *kernelSet, nt, m, sp, dp, sign int) {
	n := 4 * m
	dp /= 4
	sb, db := sign*(8+sp), sign*(n+dp)
	walk := func(visit func(d, s int)) {
		for e := range 8 {
			for j := range n {
				visit(e*db+j, j*sb+e)
			}
		}
	}
	testKernel(t, fmt.Sprintf("%s group16 nt=%d n=%d sb=%d db=%d", ks.name, nt, n, sb, db), nt,
		func(i int) [2]uint64 { return [2]uint64{^uint64(i), uint64(i)} }, walk, func(dst, src unsafe.Pointer) {
			ks.group16(dst, 16*db, src, 16*sb, n, 2*8*16, nt)
		})
}

// testRuns32 checks runs32 on 2m destination rows, each the runs (4
// 8-byte elements) of the same index in two source columns of 2m runs.
func testRuns32(t *testing.T, ks *kernelSet, nt, m, sp, dp, sign int) {
	n := 2 * m
	dp /= 2
	sb, db := sign*(4*n+sp), sign*(8+dp)
	walk := func(visit func(d, s int)) {
		for i := range n {
			for c := range 2 {
				for k := range 4 {
					visit(i*db+4*c+k, c*sb+4*i+k)
				}
			}
		}
	}
	testKernel(t, fmt.Sprintf("%s runs32 nt=%d n=%d sb=%d db=%d", ks.name, nt, n, sb, db), nt,
		func(i int) uint64 { return uint64(i) * 3 }, walk, func(dst, src unsafe.Pointer) {
			ks.runs32(dst, 8*db, src, 8*sb, n, nt)
		})
}

// testKernel runs call on a destination and a source laid out so that
// every offset walk visits (d from dst's base, s from src's) lies inside
// them, with margins of a line on either side; the source holds distinct
// values from val, the destination zeros, its base 64-byte aligned when
// nt is 1 and a few elements past that otherwise. It then checks the
// whole destination: dst[d] = src[s] for each pair walk visits, zero
// elsewhere.
func testKernel[T comparable](t *testing.T, name string, nt int, val func(int) T, walk func(visit func(d, s int)), call func(dst, src unsafe.Pointer)) {
	t.Helper()
	dMin, dMax, sMin, sMax := 0, 0, 0, 0
	walk(func(d, s int) {
		dMin, dMax = min(dMin, d), max(dMax, d)
		sMin, sMax = min(sMin, s), max(sMax, s)
	})
	var z T
	size := int(unsafe.Sizeof(z))
	pad := 64 / size
	src := make([]T, sMax-sMin+1+2*pad)
	for i := range src {
		src[i] = val(i + 1)
	}
	sBase := pad - sMin
	dst := make([]T, dMax-dMin+1+3*pad)
	dBase := pad - dMin
	for uintptr(unsafe.Pointer(&dst[dBase]))%64 != 0 {
		dBase++
	}
	if nt == 0 {
		dBase += 3 % pad
	}
	want := make([]T, len(dst))
	walk(func(d, s int) { want[dBase+d] = src[sBase+s] })
	call(unsafe.Pointer(&dst[dBase]), unsafe.Pointer(&src[sBase]))
	ntFence()
	for i := range dst {
		if dst[i] != want[i] {
			t.Fatalf("%s: element %d from the base is %v, want %v", name, i-dBase, dst[i], want[i])
		}
	}
}
