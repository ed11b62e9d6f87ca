// Package einsumexec runs einsum plans (package einsum) on the CPU. Lower
// turns a plan into a program over registers (the operands as zero-copy
// views, workspace slots, the output) whose ops are strided copies,
// elementwise products and batched strided GEMMs (package cpu/gemm); it
// chooses every intermediate's memory order so that GEMMs read and write
// in place wherever possible. Program.Execute runs the program on tensors
// of any dtype.
//
// The files follow the lowering: program.go (the program's form),
// lower.go (walking the plan's steps), layout.go and candidates.go (the
// memory order of each value), emit.go (the ops of one step), slots.go
// (workspace reuse by liveness), loops.go (loop order, merging and tiling
// of copies and products), kernels.go and exec.go (running the program).
package einsumexec

import (
	"github.com/goferro/goferro/einsum"
)

// Program is an einsum plan lowered for the CPU. It is immutable and safe
// for concurrent Execute calls; workspaces are pooled between calls.
type Program struct {
	plan    *einsum.Plan
	prog    program
	layouts []StepLayout
	pools   workspacePools
}

// StepLayout is how a program runs one step of its plan.
type StepLayout struct {
	// LeftLabels, RightLabels and OutLabels are the axis orders of the
	// step's operands and result as the program lays them out in memory.
	LeftLabels, RightLabels, OutLabels []int
	// Batch, Contracted, LeftFree and RightFree are the step's label
	// groups (einsum.Groups) in the order the GEMM walks them.
	Batch, Contracted, LeftFree, RightFree []int
	// Summed are contracted labels that no single stride walks together
	// with Contracted in both operands: the step loops over them, adding
	// one GEMM over Contracted into the result per index, rather than
	// copying an operand. Batch may likewise hold free labels.
	Summed []int
	// Copies counts the operand or result layouts the step copies (0 means
	// the GEMM reads and writes in place).
	Copies int
}

// Plan returns the plan the program runs.
func (p *Program) Plan() *einsum.Plan { return p.plan }

// Layouts describes how the program runs each step of its plan.
func (p *Program) Layouts() []StepLayout { return p.layouts }

// lay is a plan-time layout: the labels of a value's axes in memory order
// and their strides (in elements, relative to the register's base offset).
type lay struct {
	labels  []int
	strides []int
}

// stride returns the stride of label in l, and whether l has it.
func (l *lay) stride(label int) (int, bool) {
	for i, x := range l.labels {
		if x == label {
			return l.strides[i], true
		}
	}
	return 0, false
}

// regInfo is a plan-time register: an operand buffer, a workspace slot or
// the output.
type regInfo struct {
	lay    lay
	input  int // operand index, or -1
	output bool
	elems  int
	slot   int // workspace slot of an intermediate, or -1
	at     int // its offset in the slot
	last   int // index of the last op reading it
}

// opKind is the kind of an op.
type opKind uint8

const (
	opCopy opKind = iota // dst = src, or dst += src summing axes (zero > 0)
	opGemm               // batched strided GEMM
	opMul                // elementwise / outer product (nothing contracted)
)

// mat is a GEMM operand relative to its register.
type mat struct {
	off, rs, cs int
	bs          []int
}

// op is one instruction of a lowered program.
type op struct {
	kind      opKind
	dst, a, b int
	// opCopy: loop extents and strides of dst (ds) and src (ss); zero is the
	// number of dst elements to clear first (then src is accumulated).
	// opMul: ds, ss and ts are the strides of dst, a and b.
	shape, ds, ss, ts []int
	zero              int
	// tab, when set, replaces the innermost loops by offset tables: tab[k]
	// lists the offsets of the tile's elements in operand k (dst, a, b).
	tab     [][]int
	tabDims int
	// opGemm.
	batch   []int
	m, n, k int
	ma, mb  mat
	mc      mat
	// sum, for opGemm: the extents of contracted loops outside k, and
	// their strides in a (suma) and b (sumb): the GEMM runs once per
	// index, the first assigning C and the others adding to it.
	sum, suma, sumb []int
}

// program is the executable form of a plan.
type program struct {
	regs     []regInfo
	ops      []op
	slotCaps []int
	outReg   int
	// outStrides are the strides of the output axes in the output buffer
	// (row-major unless the plan allows any layout).
	outStrides []int
	zero       bool // some label has extent 0: the result is all zeros
}
