package opencl

import "github.com/goferro/goferro/tensor"

// Family names a group of operations a device implements.
type Family string

// Capability families of OpenCL devices.
const (
	FamilyTransfer     Family = "transfer"     // host↔device and device↔device copies
	FamilyPermute      Family = "permute"      // strided copies: permute, diagonal, broadcast, contiguous
	FamilyElementwise  Family = "elementwise"  // unary and broadcasting binary ops
	FamilyReduce       Family = "reduce"       // sum, prod, max, min over axes
	FamilyGEMM         Family = "gemm"         // C = alpha·A·B + beta·C, strided
	FamilyBatchedGEMM  Family = "gemm.batched" // the same over strided batch axes
	FamilyComplexArith Family = "complex"      // complex arithmetic (elementwise, reduce, GEMM)
)

// Capability is a family and the dtypes it supports on a device.
type Capability struct {
	Family Family
	DTypes []tensor.DType
}

// Capabilities lists what q really implements on its device.
// Float64 and complex128 are listed only with cl_khr_fp64; bool moves
// (transfer, permute) but has no arithmetic.
func (q *Queue) Capabilities() []Capability {
	var caps []Capability
	for _, f := range []Family{FamilyTransfer, FamilyPermute, FamilyElementwise, FamilyReduce, FamilyGEMM, FamilyBatchedGEMM, FamilyComplexArith} {
		var dts []tensor.DType
		for _, dt := range tensor.DTypes {
			if q.Supports(f, dt) {
				dts = append(dts, dt)
			}
		}
		caps = append(caps, Capability{Family: f, DTypes: dts})
	}
	return caps
}

// Supports reports whether family f runs on q's device for dt.
func (q *Queue) Supports(f Family, dt tensor.DType) bool {
	if !dt.Valid() {
		return false
	}
	switch f {
	case FamilyTransfer, FamilyPermute:
		return (dt != tensor.Float64 && dt != tensor.Complex128) || q.ctx.dev.FP64
	case FamilyComplexArith:
		return dt.IsComplex() && q.SupportsGEMM(dt)
	case FamilyElementwise:
		return q.SupportsBinary(Add, dt)
	case FamilyReduce:
		return q.SupportsReduce(Sum, dt)
	case FamilyGEMM, FamilyBatchedGEMM:
		return q.SupportsGEMM(dt)
	}
	return false
}
