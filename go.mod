module github.com/goferro/goferro

go 1.26
