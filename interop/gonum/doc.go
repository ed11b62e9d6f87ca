// Package gonum converts between goferro tensors and the matrices and
// vectors of gonum.org/v1/gonum/mat: mat.Dense, mat.CDense and
// mat.VecDense. It is a package of its own so that programs that do not
// use gonum do not depend on it.
package gonum
