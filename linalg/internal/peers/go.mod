module github.com/goferro/goferro/linalg/internal/peers

go 1.26.0

require github.com/goferro/goferro v0.0.0

require (
	golang.org/x/sys v0.50.0 // indirect
	gonum.org/v1/gonum v0.17.0
)

replace github.com/goferro/goferro => ../../..
