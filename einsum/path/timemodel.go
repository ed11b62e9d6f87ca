package path

import (
	"math"
	"math/bits"
)

// TimeModel predicts how long an engine that runs every binary step as a
// batched GEMM (as goferro's CPU engine does) spends on a contraction
// tree. Times are in units of one multiply-add at the engine's peak GEMM
// rate, so the model is relative: it ranks trees, and does not need the
// machine's absolute speed.
//
// A step contracts its operands over k elements (the product of the
// extents of the labels it sums away) into a result of batch·m·n elements
// (batch: labels in both operands and the result; m and n: labels in one
// operand only). Its time is
//
//	batch·m·n·k · min(Cap, (1 + Half/m)·(1 + Half/n))  +  Write·batch·m·n
//
// The first term is the arithmetic at a rate that saturates with the
// free dimensions: a GEMM whose m is Half runs at half the peak for that
// reason, one of a few rows at a small fraction (packing, loop overhead and
// the kernel's tile edges dominate), and Cap bounds the slowdown of
// batched dot products (m = n = 1), which run much faster than the
// product of the two factors predicts. The contracted extent k has no term of its own: a step
// over few k writes its result for little arithmetic, which the second
// term, the memory traffic of writing the result, accounts for. A step
// that sums nothing (k = 1: an outer or elementwise product) is a loop
// over its result, so it costs its multiply-adds and its writes alone.
//
// The model does not see the layouts the engine chooses (which operands
// it permutes, which result order it writes), nor the extra cost of a
// product that the engine computes transposed: trees of equal shapes
// differ in those alone.
type TimeModel struct {
	// Half is the free extent (m or n) at which a GEMM runs at half its
	// peak rate for that dimension.
	Half float64
	// Cap bounds the slowdown factor (1 + Half/m)·(1 + Half/n); zero or
	// less leaves it unbounded.
	Cap float64
	// Write is the time of writing one element of a step's result, in
	// multiply-adds at the peak rate.
	Write float64
}

// DefaultTimeModel is the model einsum gives Search (Options.Model),
// fitted by bench/timemodel-fit.py to the rates of the CPU engine's batched
// GEMM (bmk,bkn->bmn, float64, one thread of an AMD EPYC, Zen 5, AVX-512)
// measured with
//
//	GOMAXPROCS=1 go test ./cpu -run '^$' -bench GEMMRate -benchtime 20x
//
// Half and Write on the 125 shapes with m, n, k in {3, 9, 27, 81, 243}
// (bench/timemodel-gemm-rates-run1.txt: median error 1.31×, 90th
// percentile 2.3×), Cap on the batched dot products of a second run
// (run2: 95). The machine was shared and loaded, so the constants are
// rounded and uncertain (run 2 alone gives Half 82). The peak rate drops
// out; on other CPUs the ratios of small to large GEMMs and of writes to
// arithmetic are of the same order.
var DefaultTimeModel = TimeModel{Half: 43, Cap: 100, Write: 174}

// Step returns the model's time of one binary step of batch·m·n result
// elements contracted over k, in multiply-adds at the peak rate (see
// TimeModel). Extents below 1 count as 1.
func (tm TimeModel) Step(batch, m, n, k float64) float64 {
	batch, m, n, k = max(batch, 1), max(m, 1), max(n, 1), max(k, 1)
	return math.Exp2(tm.logStep(math.Log2(batch), math.Log2(m), math.Log2(n), math.Log2(k)))
}

// logStep is Step in log2 space, for trees whose times overflow float64:
// lb, lm, ln and lk are the log2 extents.
func (tm TimeModel) logStep(lb, lm, ln, lk float64) float64 {
	slow := 1.0
	if lk > 0 {
		slow = (1 + tm.Half*math.Exp2(-lm)) * (1 + tm.Half*math.Exp2(-ln))
		if tm.Cap > 0 {
			slow = min(slow, tm.Cap)
		}
	}
	arith := lb + lm + ln + lk + math.Log2(slow)
	if tm.Write <= 0 {
		return arith
	}
	return logAdd(arith, math.Log2(tm.Write)+lb+lm+ln)
}

// logTreeTime returns log2 of the model's time of tree t: the sum over its
// contractions.
func (tm TimeModel) logTreeTime(t *tree) float64 {
	total := math.Inf(-1)
	for i := t.leaves; i < len(t.child); i++ {
		total = logAdd(total, tm.logNodeTime(t, i))
	}
	return total
}

// logNodeTime returns log2 of the model's time of contraction node i of t.
// A label in one child only that the result lacks is summed before the
// step (as the engine does), and adds nothing here.
func (tm TimeModel) logNodeTime(t *tree, i int) float64 {
	a, b := t.nodeLegs(t.child[i][0]), t.nodeLegs(t.child[i][1])
	legs := t.nodeLegs(i)
	var lb, lm, ln, lk float64
	for w := range legs {
		both := a[w] & b[w]
		lb += t.logWord(w, both&legs[w])
		lk += t.logWord(w, both&^legs[w])
		lm += t.logWord(w, a[w]&^b[w]&legs[w])
		ln += t.logWord(w, b[w]&^a[w]&legs[w])
	}
	return tm.logStep(lb, lm, ln, lk)
}

// maxPolishPasses bounds polish's passes over a tree.
const maxPolishPasses = 8

// polish rotates contractions of t where that makes the model's time
// shorter and the objective of o no worse: a node p = (x, C) with x =
// (A, B) becomes (A, (B, C)) or (B, (A, C)). Only x and p change, so each
// rotation is judged on those two steps. Rotations honour MemoryLimit,
// and with Minimize "size" never grow the intermediate. Trees of equal
// objective often differ in their GEMMs (a batch of tiny products against
// one large one), which the objective cannot see.
func (tm TimeModel) polish(t *tree, o Options) {
	lim := math.Inf(1)
	if o.MemoryLimit > 0 {
		lim = math.Log2(o.MemoryLimit)
	}
	logWW, logRW := math.Log2(o.WriteWeight), math.Log2(o.ReadWeight)
	// local returns log2 of the objective and of the model's time of
	// nodes x and p.
	local := func(x, p int) (score, tim float64) {
		score, tim = math.Inf(-1), math.Inf(-1)
		for _, i := range []int{x, p} {
			score = logAdd(score, t.logF[i])
			if o.WriteWeight > 0 {
				score = logAdd(score, logWW+t.logS[i])
			}
			if o.ReadWeight > 0 {
				for _, c := range t.child[i] {
					score = logAdd(score, logRW+t.logS[c])
				}
			}
			tim = logAdd(tim, tm.logNodeTime(t, i))
		}
		return score, tim
	}
	saved := make([]uint64, t.nw)
	for range maxPolishPasses {
		changed := false
		for p := t.leaves; p < len(t.child); p++ {
			for side := range 2 {
				x, c := t.child[p][side], t.child[p][1-side]
				if x < t.leaves {
					continue
				}
				for keep := range 2 {
					a, b := t.child[x][keep], t.child[x][1-keep]
					oldScore, oldTime := local(x, p)
					oldChildX, oldChildP, oldF, oldS := t.child[x], t.child[p], t.logF[x], t.logS[x]
					copy(saved, t.nodeLegs(x))
					// x becomes (b, c), p becomes (a, x).
					la, lb, lc, lp, lx := t.nodeLegs(a), t.nodeLegs(b), t.nodeLegs(c), t.nodeLegs(p), t.nodeLegs(x)
					for w := range lx {
						lx[w] = (lb[w] | lc[w]) & (la[w] | lp[w])
					}
					t.child[x], t.child[p] = [2]int{b, c}, [2]int{a, x}
					t.update(x)
					t.update(p)
					newScore, newTime := local(x, p)
					ok := newTime < oldTime-1e-9 && newScore <= oldScore+1e-12 && t.logS[x] <= lim &&
						(o.Minimize != "size" || t.logS[x] <= oldS)
					if ok {
						changed = true
						break
					}
					copy(lx, saved)
					t.child[x], t.child[p] = oldChildX, oldChildP
					t.logF[x], t.logS[x] = oldF, oldS
					t.update(p)
				}
			}
		}
		if !changed {
			return
		}
	}
}

// logWord returns the log2 product of the sizes of the labels in word w
// of a bitset.
func (t *tree) logWord(w int, x uint64) float64 {
	ls := 0.0
	for x != 0 {
		ls += t.logSz[w*64+bits.TrailingZeros64(x)]
		x &= x - 1
	}
	return ls
}

// Log2Time returns log2 of the model's time of path p over network n (see
// TimeModel), finite where the time overflows float64. Steps of more than
// two operands are split left to right; p must have no single-operand
// step (unless n has one input). It reports an ErrInvalid error for an
// invalid network or path.
func (tm TimeModel) Log2Time(n Network, p Path) (float64, error) {
	if _, err := Evaluate(n, p); err != nil { // validates n and p
		return 0, err
	}
	if len(n.Inputs) < 2 {
		return math.Inf(-1), nil
	}
	pairs, err := pairsOf(len(n.Inputs), p)
	if err != nil {
		return 0, err
	}
	return tm.logTreeTime(newTree(&n, pairs)), nil
}
