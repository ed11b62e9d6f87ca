package opencl

import (
	"strings"

	"github.com/goferro/goferro/tensor"
)

// Work-group geometry compiled into the kernels. Fixed local sizes mean each
// kernel is specialised once (PoCL compiles one work-group function per local
// size), and ragged global sizes are rounded up and guarded.
const (
	ewLocal  = 64 // elementwise and reduction work-group size
	gemmTM   = 64 // GEMM tile rows per work-group
	gemmTN   = 64 // GEMM tile columns per work-group
	gemmTK   = 16 // GEMM depth of one local-memory tile
	gemmLX   = 16 // GEMM work-group columns
	gemmLY   = 16 // GEMM work-group rows; each item computes (TM/LY)×(TN/LX)
	smallL   = 8  // small-GEMM work-group side
	vecX     = 16 // vector-GEMM work-group columns (of 8 elements each)
	vecY     = 2  // vector-GEMM work-group rows (of VRM rows each)
	maxRank  = 8  // highest rank after collapsing axes
	smallDim = 16 // GEMMs with m or n below this use the simple kernel
)

// clType returns the kernel-name suffix of an arithmetic dtype (the OpenCL
// C type for real types, "cfloat"/"cdouble" for complex ones) and whether
// arithmetic kernels exist for it.
func clType(dt tensor.DType) (string, bool) {
	switch dt {
	case tensor.Complex64:
		return "cfloat", true
	case tensor.Complex128:
		return "cdouble", true
	case tensor.Float32:
		return "float", true
	case tensor.Float64:
		return "double", true
	case tensor.Int32:
		return "int", true
	case tensor.Int64:
		return "long", true
	}
	return "", false
}

// bitsType returns the OpenCL C type moving one element of size n bytes.
func bitsType(n int) string {
	switch n {
	case 1:
		return "uchar"
	case 4:
		return "uint"
	case 8:
		return "ulong"
	case 16:
		return "ulong2"
	}
	return ""
}

const header = `
#define RANK_STEP(k, ADV) if (rank > k) { long i_ = rem % sh.s##k; rem /= sh.s##k; ADV(k) }
#define RANK_ALL(ADV) RANK_STEP(0, ADV) RANK_STEP(1, ADV) RANK_STEP(2, ADV) RANK_STEP(3, ADV) \
	RANK_STEP(4, ADV) RANK_STEP(5, ADV) RANK_STEP(6, ADV) RANK_STEP(7, ADV)
// ND_ITEM(ADV) starts a rank-N kernel of one work item per element (n of
// them, shape sh): the item's element g, its operand offsets advanced by ADV
// over g's index.
#define ND_ITEM(ADV) long g = get_global_id(0); if (g >= n) return; long rem = g; RANK_ALL(ADV)
// GEMM_PARAMS(T) are the parameters of the strided GEMM kernels: sizes,
// scalars, each operand's buffer, offset and row and column strides, and
// the batch axes (rank, extents sh, each operand's strides).
#define GEMM_PARAMS(T) int m, int n, int k, T alpha, T beta, \
	__global const T* A, long ao, long ars, long acs, \
	__global const T* B, long bo, long brs, long bcs, \
	__global T* C, long co, long crs, long ccs, \
	int rank, long8 sh, long8 bsa, long8 bsb, long8 bsc
`

// Elementwise kernels: one work item per output element. The op is a
// uniform run-time switch so that one compiled kernel serves every op of a
// dtype. Axes are passed innermost first.
const ewTemplate = `
inline T un_T(int op, T x) {
	switch (op) {
UNARY_CASES
	}
	return x;
}
inline T bin_T(int op, T x, T y) {
	switch (op) {
BINARY_CASES
	}
	return x;
}
#define ADV1(k) oo += i_ * so.s##k; ao += i_ * sa.s##k;
#define ADV2(k) oo += i_ * so.s##k; ao += i_ * sa.s##k; bo += i_ * sb.s##k;
// Up to three axes run as a 3-D range without index division: axis 0 is
// get_global_id(0) (guarded), axes 1 and 2 the other two ids.
#define AT3(s) (i0 * s.x + i1 * s.y + i2 * s.z)
#define IDS3 long i0 = get_global_id(0); if (i0 >= n0) return; long i1 = get_global_id(1), i2 = get_global_id(2);
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void un3_T(int op, long n0, __global T* o, long oo, long4 so, __global const T* a, long ao, long4 sa) {
	IDS3
	o[oo + AT3(so)] = un_T(op, a[ao + AT3(sa)]);
}
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void unn_T(int op, long n, int rank, long8 sh, __global T* o, long oo, long8 so, __global const T* a, long ao, long8 sa) {
	ND_ITEM(ADV1)
	o[oo] = un_T(op, a[ao]);
}
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void bin3_T(int op, long n0, __global T* o, long oo, long4 so, __global const T* a, long ao, long4 sa, __global const T* b, long bo, long4 sb) {
	IDS3
	o[oo + AT3(so)] = bin_T(op, a[ao + AT3(sa)], b[bo + AT3(sb)]);
}
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void binn_T(int op, long n, int rank, long8 sh, __global T* o, long oo, long8 so, __global const T* a, long ao, long8 sa, __global const T* b, long bo, long8 sb) {
	ND_ITEM(ADV2)
	o[oo] = bin_T(op, a[ao], b[bo]);
}

inline T redop_T(int op, T x, T y) {
	switch (op) {
	case 0: return x + y;
	case 1: return PRODF(x, y);
	case 2: return MAXF(x, y);
	case 3: return MINF(x, y);
	}
	return x;
}
inline T redinit_T(int op) {
	switch (op) {
	case 1: return ONE;
	case 2: return LOWEST;
	case 3: return HIGHEST;
	}
	return (T)0;
}
#define ADVO(k) oo += i_ * so.s##k; ao += i_ * sa.s##k;
#define ADVR(k) base += i_ * sr.s##k;
// One work item per output element; the innermost reduced axis is a
// direct loop.
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void red_T(int op, long n, int rank, long8 sh, __global T* o, long oo, long8 so, __global const T* a, long ao, long8 sa,
		int rrank, long8 rsh, long8 sr, long nred) {
	ND_ITEM(ADVO)
	T acc = redinit_T(op);
	long inner = rsh.s0, sin = sr.s0;
	long nouter = nred / inner;
	for (long j = 0; j < nouter; j++) {
		long base = ao;
		rem = j;
		{
			int rank = rrank; long8 sh = rsh;
			RANK_STEP(1, ADVR) RANK_STEP(2, ADVR) RANK_STEP(3, ADVR) RANK_STEP(4, ADVR)
			RANK_STEP(5, ADVR) RANK_STEP(6, ADVR) RANK_STEP(7, ADVR)
		}
		for (long t = 0; t < inner; t++) acc = redop_T(op, acc, a[base + t * sin]);
	}
	o[oo] = acc;
}
// One work-group per output element, for few long reductions.
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void redwg_T(int op, int rank, long8 sh, __global T* o, long oo, long8 so, __global const T* a, long ao, long8 sa,
		int rrank, long8 rsh, long8 sr, long nred) {
	__local T buf[EWL];
	long g = get_group_id(0);
	int l = get_local_id(0);
	long rem = g;
	RANK_ALL(ADVO)
	T acc = redinit_T(op);
	for (long j = l; j < nred; j += EWL) {
		long base = ao;
		rem = j;
		{
			int rank = rrank; long8 sh = rsh;
			RANK_ALL(ADVR)
		}
		acc = redop_T(op, acc, a[base]);
	}
	buf[l] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = EWL / 2; s > 0; s >>= 1) {
		if (l < s) buf[l] = redop_T(op, buf[l], buf[l + s]);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (l == 0) o[oo] = buf[0];
}
`

// Strided copies move raw element bits, so they serve every dtype
// (permutation, contiguous copies, broadcasting materialisation).
const copyTemplate = `
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void cp3_B(long n0, __global B* o, long oo, long4 so, __global const B* a, long ao, long4 sa) {
	IDS3
	o[oo + AT3(so)] = a[ao + AT3(sa)];
}
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void cpn_B(long n, int rank, long8 sh, __global B* o, long oo, long8 so, __global const B* a, long ao, long8 sa) {
	ND_ITEM(ADV1)
	o[oo] = a[ao];
}
`

// GEMM: C = alpha·A·B + beta·C over strided, batched operands. Each
// work-group computes a TM×TN tile of C through TK-deep tiles of A and B
// staged in local memory; each work item holds an RM×RN register block,
// interleaved by LY/LX so neighbouring items touch neighbouring columns.
// Batch axes (innermost first) are unravelled from get_global_id(2).
const gemmTemplate = `
#define RM (TM / LY)
#define RN (TN / LX)
#define ADVB(k) ao += i_ * bsa.s##k; bo += i_ * bsb.s##k; co += i_ * bsc.s##k;
__kernel __attribute__((reqd_work_group_size(LX, LY, 1)))
void gemm_T(GEMM_PARAMS(T)) {
	__local T As[TK][TM];
	__local T Bs[TK][TN];
	int tx = get_local_id(0), ty = get_local_id(1);
	int tid = ty * LX + tx;
	int col0 = get_group_id(0) * TN, row0 = get_group_id(1) * TM;
	long rem = get_global_id(2);
	RANK_ALL(ADVB)
	T acc[RM][RN];
	for (int i = 0; i < RM; i++)
		for (int j = 0; j < RN; j++) acc[i][j] = (T)0;
	for (int kk = 0; kk < k; kk += TK) {
		for (int l = tid; l < TM * TK; l += LX * LY) {
			int p = l % TK, i = l / TK;
			int r = row0 + i, q = kk + p;
			As[p][i] = (r < m && q < k) ? A[ao + r * ars + q * acs] : (T)0;
		}
		for (int l = tid; l < TN * TK; l += LX * LY) {
			int j = l % TN, p = l / TN;
			int c = col0 + j, q = kk + p;
			Bs[p][j] = (c < n && q < k) ? B[bo + q * brs + c * bcs] : (T)0;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int p = 0; p < TK; p++) {
			T av[RM], bv[RN];
			for (int i = 0; i < RM; i++) av[i] = As[p][ty + i * LY];
			for (int j = 0; j < RN; j++) bv[j] = Bs[p][tx + j * LX];
			for (int i = 0; i < RM; i++)
				for (int j = 0; j < RN; j++) acc[i][j] += av[i] * bv[j];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	for (int i = 0; i < RM; i++) {
		int r = row0 + ty + i * LY;
		if (r >= m) continue;
		for (int j = 0; j < RN; j++) {
			int c = col0 + tx + j * LX;
			if (c >= n) continue;
			long p = co + r * crs + c * ccs;
			T v = alpha * acc[i][j];
			C[p] = beta == (T)0 ? v : v + beta * C[p];
		}
	}
}
// Vector GEMM. A and B arrive packed in panels: A as [m/VRM][k][VRM] and B
// as [n/VW][k][VW] per batch element, so each work item streams two
// contiguous panels, computing VRM rows by VW columns of C with vector
// accumulators (a broadcast scalar of A times a vector of B). Panel padding
// past m or n is never stored.
__kernel __attribute__((reqd_work_group_size(VX, VY, 1)))
void gemmv_T(int m, int n, int k, T alpha, T beta,
		__global const T* A, long ao, __global const T* B, long bo,
		__global T* C, long co, long crs, long ccs,
		int rank, long8 sh, long8 bsa, long8 bsb, long8 bsc) {
	int gx = get_global_id(0), gy = get_global_id(1);
	int c0 = gx * VW, r0 = gy * VRM;
	long rem = get_global_id(2);
	RANK_ALL(ADVB)
	if (c0 >= n || r0 >= m) return;
	TV acc[VRM];
	#pragma unroll
	for (int i = 0; i < VRM; i++) acc[i] = (TV)(0);
	__global const T* ap = A + ao + (long)gy * k * VRM;
	__global const T* bp = B + bo + (long)gx * k * VW;
	for (int p = 0; p < k; p++, ap += VRM, bp += VW) {
		TV b = VLOADW(0, bp);
		#pragma unroll
		for (int i = 0; i < VRM; i++) acc[i] = mad((TV)(ap[i]), b, acc[i]);
	}
	#pragma unroll
	for (int i = 0; i < VRM; i++) {
		int r = r0 + i;
		if (r >= m) break;
		T tmp[VW];
		VSTOREW(acc[i], 0, tmp);
		long p = co + r * crs + c0 * ccs;
		for (int j = 0; j < VW && c0 + j < n; j++, p += ccs) {
			T v = alpha * tmp[j];
			C[p] = beta == (T)0 ? v : v + beta * C[p];
		}
	}
}
// Small or skinny products: one work item per element of C.
__kernel __attribute__((reqd_work_group_size(SL, SL, 1)))
void gemms_T(GEMM_PARAMS(T)) {
	int c = get_global_id(0), r = get_global_id(1);
	long rem = get_global_id(2);
	RANK_ALL(ADVB)
	if (r >= m || c >= n) return;
	T acc = (T)0;
	long pa = ao + r * ars, pb = bo + c * bcs;
	for (int q = 0; q < k; q++) acc += A[pa + q * acs] * B[pb + q * brs];
	long p = co + r * crs + c * ccs;
	T v = alpha * acc;
	C[p] = beta == (T)0 ? v : v + beta * C[p];
}
`

// intPowHelper is x**y by squaring, as cpu's intPow (BinaryInto refuses a
// negative y before the kernel runs; it gives 0 here), and fdiv_T numpy's
// floor division, as cpu's intDiv.
const intPowHelper = `
inline T fdiv_T(T x, T y) {
	if (y == (T)0) return (T)0;
	if (y == (T)(-1)) return -x;
	T q = x / y;
	return (x % y != (T)0 && ((x < (T)0) != (y < (T)0))) ? q - (T)1 : q;
}
inline T ipow_T(T x, T y) {
	if (y < (T)0) return (T)0;
	T r = (T)1;
	while (y > (T)0) {
		if (y & (T)1) r *= x;
		x *= x;
		y >>= 1;
	}
	return r;
}
`

// Complex helpers and GEMM: T is float2 or double2 (re, im), R its real
// type. One work item per element of C; alpha and beta are complex.
const complexHelpers = `
inline T cmul_T(const T a, const T b) { return (T)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline T cdiv_T(const T a, const T b) {
	R d = b.x * b.x + b.y * b.y;
	return (T)((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);
}
inline T cexp_T(const T z) { R e = exp(z.x); return (T)(e * cos(z.y), e * sin(z.y)); }
inline T clog_T(const T z) { return (T)(log(hypot(z.x, z.y)), atan2(z.y, z.x)); }
inline T csqrt_T(const T z) {
	R r = hypot(z.x, z.y);
	if (r == (R)0) return (T)(0);
	R a = sqrt((r + fabs(z.x)) / (R)2);
	R b = z.y / ((R)2 * a);
	return z.x >= (R)0 ? (T)(a, b) : (T)(fabs(b), copysign(a, z.y));
}
inline T cpow_T(const T x, const T y) {
	if (x.x == (R)0 && x.y == (R)0) {
		if (y.x == (R)0 && y.y == (R)0) return (T)(1, 0);
		return y.x > (R)0 ? (T)(0) : (T)(INFINITY, 0);
	}
	return cexp_T(cmul_T(y, clog_T(x)));
}
`

const complexGemmTemplate = `
__kernel __attribute__((reqd_work_group_size(SL, SL, 1)))
void gemmc_T(GEMM_PARAMS(T)) {
	int c = get_global_id(0), r = get_global_id(1);
	long rem = get_global_id(2);
	RANK_ALL(ADVB)
	if (r >= m || c >= n) return;
	T acc = (T)(0);
	long pa = ao + r * ars, pb = bo + c * bcs;
	for (int q = 0; q < k; q++) acc += cmul_T(A[pa + q * acs], B[pb + q * brs]);
	long p = co + r * crs + c * ccs;
	T v = cmul_T(alpha, acc);
	C[p] = (beta.x == (R)0 && beta.y == (R)0) ? v : v + cmul_T(beta, C[p]);
}
`

// cabsTemplate is |z| of a complex tensor into its real counterpart.
const cabsTemplate = `
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void cabsn_T(long n, int rank, long8 sh, __global R* o, long oo, long8 so, __global const T* a, long ao, long8 sa) {
	ND_ITEM(ADV1)
	o[oo] = hypot(a[ao].x, a[ao].y);
}
`

// compareTemplate: a op b with broadcasting into a bool (uchar) tensor.
const compareTemplate = `
inline uchar cmpop_T(int op, T x, T y) {
	switch (op) {
CMP_CASES
	}
	return 0;
}
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void cmpn_T(int op, long n, int rank, long8 sh, __global uchar* o, long oo, long8 so, __global const T* a, long ao, long8 sa, __global const T* b, long bo, long8 sb) {
	ND_ITEM(ADV2)
	o[oo] = cmpop_T(op, a[ao], b[bo]);
}
`

// selectTemplate: cond ? a : b with broadcasting, moving raw element bits.
const selectTemplate = `
#define ADV3(k) oo += i_ * so.s##k; co += i_ * sc.s##k; ao += i_ * sa.s##k; bo += i_ * sb.s##k;
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void seln_B(long n, int rank, long8 sh, __global B* o, long oo, long8 so, __global const uchar* c, long co, long8 sc,
		__global const B* a, long ao, long8 sa, __global const B* b, long bo, long8 sb) {
	ND_ITEM(ADV3)
	o[oo] = c[co] ? a[ao] : b[bo];
}
`

// convertTemplate converts between dtypes with broadcasting.
const convertTemplate = `
__kernel __attribute__((reqd_work_group_size(EWL, 1, 1)))
void cv_S_D(long n, int rank, long8 sh, __global DSTT* o, long oo, long8 so, __global const SRCT* a, long ao, long8 sa) {
	ND_ITEM(ADV1)
	SRCT x = a[ao];
	o[oo] = CONV(x);
}
`

// UnaryOp is an elementwise operation of one operand.
type UnaryOp int32

// Unary operations, with the dtype rules of graph.UnaryOps: Copy, Neg,
// Square, Abs and Conj exist for every arithmetic dtype (Abs of a complex
// tensor is its real counterpart); Exp, Log, Sqrt and Recip for floating and
// complex types; Relu, Sin, Cos and Tanh for real types (Relu also integer).
const (
	Copy UnaryOp = iota
	Neg
	Abs
	Square
	Relu
	Exp
	Log
	Sqrt
	Sin
	Cos
	Tanh
	Recip
	Conj // complex conjugate; the identity on real types
	numUnary
)

var unaryNames = [numUnary]string{"copy", "neg", "abs", "square", "relu", "exp", "log", "sqrt", "sin", "cos", "tanh", "recip", "conj"}

// String returns the op's name.
func (o UnaryOp) String() string { return opName(o, unaryNames[:], "unary(?)") }

// BinaryOp is an elementwise operation of two broadcast operands.
type BinaryOp int32

// Binary operations, with the semantics of graph.BinaryOps and package cpu:
// Add, Sub, Mul, Div and Pow exist for every arithmetic dtype (integer Div
// is numpy's floor division and x/0 is 0; integer Pow by squaring, a
// negative exponent an error wrapping tensor.ErrDomain, as numpy raises);
// Max and Min for real types, where
// they propagate NaN like numpy.maximum and numpy.minimum.
const (
	Add BinaryOp = iota
	Sub
	Mul
	Max
	Min
	Div
	Pow
	numBinary
)

var binaryNames = [numBinary]string{"add", "sub", "mul", "max", "min", "div", "pow"}

// String returns the op's name.
func (o BinaryOp) String() string { return opName(o, binaryNames[:], "binary(?)") }

// ReduceOp is a reduction over axes.
type ReduceOp int32

// Reductions. Sum and Prod exist for every arithmetic dtype, Max and Min for
// real ones; they propagate NaN and are undefined over zero elements
// (declined with ErrShape).
const (
	Sum ReduceOp = iota
	Prod
	ReduceMax
	ReduceMin
	numReduce
)

var reduceNames = [numReduce]string{"sum", "prod", "max", "min"}

// String returns the op's name.
func (o ReduceOp) String() string { return opName(o, reduceNames[:], "reduce(?)") }

// opName returns the name of op o from names, or unknown for a number
// that names no op.
func opName[Op ~int32](o Op, names []string, unknown string) string {
	if o >= 0 && int(o) < len(names) {
		return names[o]
	}
	return unknown
}

func unaryDefined(o UnaryOp, dt tensor.DType) bool {
	switch {
	case o < 0 || o >= numUnary:
		return false
	case dt.IsComplex():
		switch o {
		case Copy, Neg, Square, Conj, Abs, Exp, Log, Sqrt, Recip:
			return true
		}
		return false
	case dt.IsInt():
		return o < Exp || o == Conj
	}
	return true
}

func binaryDefined(o BinaryOp, dt tensor.DType) bool {
	switch {
	case o < 0 || o >= numBinary:
		return false
	case dt.IsComplex():
		return o == Add || o == Sub || o == Mul || o == Div || o == Pow
	}
	return true
}

func reduceDefined(o ReduceOp, dt tensor.DType) bool {
	if dt.IsComplex() {
		return o == Sum || o == Prod
	}
	return o >= 0 && o < numReduce
}

// programSource returns the whole kernel program for a device.
func programSource(fp64 bool) string {
	var sb strings.Builder
	if fp64 {
		sb.WriteString("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
	}
	sb.WriteString(header)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64} {
		if dt == tensor.Float64 && !fp64 {
			continue
		}
		t, _ := clType(dt)
		float := dt.IsFloat()
		var un, bin strings.Builder
		un.WriteString("\tcase 1: return -x;\n")
		bin.WriteString("\tcase 0: return x + y;\n\tcase 1: return x - y;\n\tcase 2: return x * y;\n")
		un.WriteString("\tcase 3: return x * x;\n")
		if float {
			un.WriteString("\tcase 2: return fabs(x);\n\tcase 4: return x > (T)0 ? x : (T)0;\n")
			un.WriteString("\tcase 5: return exp(x);\n\tcase 6: return log(x);\n\tcase 7: return sqrt(x);\n")
			un.WriteString("\tcase 8: return sin(x);\n\tcase 9: return cos(x);\n\tcase 10: return tanh(x);\n\tcase 11: return (T)1 / x;\n")
			bin.WriteString("\tcase 3: return (isnan(x) || x > y) ? x : y;\n\tcase 4: return (isnan(x) || x < y) ? x : y;\n")
			bin.WriteString("\tcase 5: return x / y;\n\tcase 6: return pow(x, y);\n")
		} else {
			un.WriteString("\tcase 2: return x < (T)0 ? -x : x;\n\tcase 4: return x > (T)0 ? x : (T)0;\n")
			bin.WriteString("\tcase 3: return x > y ? x : y;\n\tcase 4: return x < y ? x : y;\n")
			// numpy's floor division (x // y); x/0 is 0 and MIN/-1
			// wraps (no trap), as on the CPU.
			bin.WriteString("\tcase 5: return fdiv_T(x, y);\n\tcase 6: return ipow_T(x, y);\n")
			src0 := strings.NewReplacer("_T(T ", "_"+t+"("+t+" ", "_T(", "_"+t+"(", " T ", " "+t+" ", "(T)", "("+t+")", "\tT ", "\t"+t+" ").Replace(intPowHelper)
			sb.WriteString(src0)
		}
		src := strings.NewReplacer("UNARY_CASES", un.String(), "BINARY_CASES", bin.String()).Replace(ewTemplate)
		var maxf, minf, lo, hi string
		switch dt {
		case tensor.Float32, tensor.Float64:
			maxf, minf, lo, hi = "((isnan(x) || x > y) ? x : y)", "((isnan(x) || x < y) ? x : y)", "(T)(-INFINITY)", "(T)INFINITY"
		case tensor.Int32:
			maxf, minf, lo, hi = "(x > y ? x : y)", "(x < y ? x : y)", "INT_MIN", "INT_MAX"
		case tensor.Int64:
			maxf, minf, lo, hi = "(x > y ? x : y)", "(x < y ? x : y)", "LONG_MIN", "LONG_MAX"
		}
		src = strings.NewReplacer("MAXF(x, y)", maxf, "MINF(x, y)", minf, "LOWEST", lo, "HIGHEST", hi,
			"PRODF(x, y)", "x * y", "ONE", "(T)1").Replace(src)
		if float {
			src += gemmTemplate
		}
		sb.WriteString(replaceType(src, t))
	}
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		if dt == tensor.Complex128 && !fp64 {
			continue
		}
		suffix, _ := clType(dt)
		r := "float"
		if dt == tensor.Complex128 {
			r = "double"
		}
		un := "\tcase 1: return -x;\n\tcase 3: return cmul_T(x, x);\n\tcase 12: return (T)(x.x, -x.y);\n" +
			"\tcase 5: return cexp_T(x);\n\tcase 6: return clog_T(x);\n\tcase 7: return csqrt_T(x);\n\tcase 11: return cdiv_T((T)(1, 0), x);\n"
		bin := "\tcase 0: return x + y;\n\tcase 1: return x - y;\n\tcase 2: return cmul_T(x, y);\n\tcase 5: return cdiv_T(x, y);\n\tcase 6: return cpow_T(x, y);\n"
		src := complexHelpers + strings.NewReplacer("UNARY_CASES", un, "BINARY_CASES", bin).Replace(ewTemplate) + complexGemmTemplate + cabsTemplate
		src = strings.NewReplacer("MAXF(x, y)", "x", "MINF(x, y)", "x", "LOWEST", "(T)(0)", "HIGHEST", "(T)(0)",
			"PRODF(x, y)", "cmul_T(x, y)", "ONE", "(T)(1, 0)", " R ", " "+r+" ", " R*", " "+r+"*", "(R)", "("+r+")", "\tR ", "\t"+r+" ").Replace(src)
		sb.WriteString(replaceTypeAs(src, r+"2", suffix))
	}
	for _, n := range []int{1, 4, 8, 16} {
		b := bitsType(n)
		sb.WriteString(strings.NewReplacer("_B(", "_"+b+"(", " B*", " "+b+"*").Replace(copyTemplate + selectTemplate))
	}
	var kinds []tensor.DType
	for _, dt := range tensor.DTypes {
		if (dt == tensor.Float64 || dt == tensor.Complex128) && !fp64 {
			continue
		}
		kinds = append(kinds, dt)
	}
	for _, dt := range kinds {
		t, suffix := elemType(dt), dt.String()
		var cmp string
		switch {
		case dt.IsComplex():
			cmp = "\tcase 0: return x.x == y.x && x.y == y.y;\n\tcase 1: return x.x != y.x || x.y != y.y;\n"
		default:
			cmp = "\tcase 0: return x == y;\n\tcase 1: return x != y;\n\tcase 2: return x < y;\n\tcase 3: return x <= y;\n\tcase 4: return x > y;\n\tcase 5: return x >= y;\n"
		}
		sb.WriteString(replaceTypeAs(strings.Replace(compareTemplate, "CMP_CASES", cmp, 1), t, suffix))
		for _, to := range kinds {
			if to == dt {
				continue
			}
			conv := strings.NewReplacer("_S_D(", "_"+suffix+"_"+to.String()+"(", "SRCT", t, "DSTT", elemType(to),
				"CONV(x)", convertExpr(dt, to)).Replace(convertTemplate)
			sb.WriteString(conv)
		}
	}
	return sb.String()
}

// elemType is the OpenCL C type holding one element of dt.
func elemType(dt tensor.DType) string {
	switch dt {
	case tensor.Bool:
		return "uchar"
	case tensor.Complex64:
		return "float2"
	case tensor.Complex128:
		return "double2"
	}
	t, _ := clType(dt)
	return t
}

// convertExpr is the OpenCL C expression converting x of type from to type
// to, with the semantics of cpu.Convert: complex to real keeps the real
// part, anything to bool is "!= 0", bool is 0 or 1.
func convertExpr(from, to tensor.DType) string {
	dt := elemType(to)
	src := "x"
	switch {
	case from.IsComplex() && to == tensor.Bool:
		return "(uchar)(x.x != 0 || x.y != 0)"
	case to == tensor.Bool:
		return "(uchar)(x != 0)"
	case from == tensor.Bool:
		src = "(x != 0)"
	}
	switch {
	case from.IsComplex() && to.IsComplex():
		r := elemType(to.Real())
		return "(" + dt + ")((" + r + ")x.x, (" + r + ")x.y)"
	case from.IsComplex():
		return "(" + dt + ")x.x"
	case to.IsComplex():
		r := elemType(to.Real())
		return "(" + dt + ")((" + r + ")" + src + ", (" + r + ")0)"
	}
	return "(" + dt + ")" + src
}

// replaceType substitutes the element type T, both as a type and as the
// suffix of kernel and helper names.
func replaceType(src, t string) string { return replaceTypeAs(src, t, t) }

// replaceTypeAs substitutes the type t and the name suffix suffix.
func replaceTypeAs(src, t, suffix string) string {
	// Vector GEMM: one AVX-sized vector of B per step (8 floats, 4
	// doubles), VRM rows of A.
	vrm, vw := "8", "8"
	if t == "double" {
		vw = "4"
	}
	r := strings.NewReplacer("VRM", vrm, "VW", vw, "TV", t+vw, "VLOADW", "vload"+vw, "VSTOREW", "vstore"+vw, "_T(T ", "_"+suffix+"("+t+" ", "_T(", "_"+suffix+"(", "(T)", "("+t+")", " T ", " "+t+" ", " T*", " "+t+"*", "\tT ", "\t"+t+" ")
	return r.Replace(src)
}

// buildOptions are the compiler flags: the geometry constants.
func buildOptions() string {
	return strings.Join([]string{
		"-cl-mad-enable",
		"-DEWL=" + itoa(ewLocal), "-DTM=" + itoa(gemmTM), "-DTN=" + itoa(gemmTN), "-DTK=" + itoa(gemmTK),
		"-DLX=" + itoa(gemmLX), "-DLY=" + itoa(gemmLY), "-DSL=" + itoa(smallL), "-DVX=" + itoa(vecX), "-DVY=" + itoa(vecY),
	}, " ")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}
