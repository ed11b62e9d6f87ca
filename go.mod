module github.com/goferro/goferro

go 1.26.0

require (
	github.com/ebitengine/purego v0.11.3
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
	gonum.org/v1/gonum v0.17.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/tools v0.30.0 // indirect
