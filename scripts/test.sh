#!/usr/bin/env bash
# The whole goferro test suite: installs what the tests need when it is
# missing (numpy for the numpy comparisons, PoCL for the OpenCL engine), then
# checks formatting, vets, and runs every test, the runtime and linalg under -race;
# then vets, builds and tests bench/plot, the benchmark plots' own module.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
/usr/bin/python3 -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
[ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 ] || ls /usr/lib/*/libOpenCL.so.1 >/dev/null 2>&1 || need+=(ocl-icd-libopencl1)
ls /etc/OpenCL/vendors/*pocl* >/dev/null 2>&1 || need+=(pocl-opencl-icd)
command -v mpirun >/dev/null || need+=(openmpi-bin) # the mpi tests run 2 processes under mpirun
# MPICH too, so the mpi tests run under both implementations; without its
# recommends (libmpich-dev would pull in compilers the tests do not use).
lean=()
command -v mpiexec.mpich >/dev/null || lean+=(mpich)
if [ $((${#need[@]} + ${#lean[@]})) -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "test.sh: installing ${need[*]} ${lean[*]}"
		apt-get update -qq >/dev/null
		[ ${#need[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
		[ ${#lean[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
	else
		echo "test.sh: missing ${need[*]} ${lean[*]} and cannot install them; those tests will skip"
	fi
fi

echo "== gofmt"
bad=$(gofmt -l .)
if [ -n "$bad" ]; then
	echo "gofmt needed on:"; echo "$bad"; exit 1
fi
echo "== go vet"
go vet ./...
echo "== go build (CGO_ENABLED=0)"
CGO_ENABLED=0 go build ./...
echo "== go test"
go test -count=1 -timeout 20m ./...
echo "== go test (portable code without assembly, -tags purego: GEMM kernel, strided copy, level-1 kernels in internal/level1, linalg's rotations)"
go test -count=1 -tags purego ./cpu/gemm/ ./internal/strided/ ./internal/level1/ ./linalg/
for isa in avx512 avx2 generic; do
	echo "== go test (kernel paths forced: GOFERRO_GEMM_ISA=$isa, GEMM, strided copies, level-1 kernels in internal/level1, linalg's rotations; skips where the CPU lacks it)"
	GOFERRO_GEMM_ISA=$isa go test -count=1 ./cpu/gemm/ ./internal/strided/ ./internal/level1/ ./linalg/
done
echo "== go test -race (runtime, its test engines, the OpenCL engine)"
go test -count=1 -race -timeout 20m . ./goferrotest/... ./internal/... ./opencl/clengine/
echo "== go test -race (linalg: its teams of goroutines and parallel loops)"
go test -count=1 -race ./linalg/
echo "== go test -race (the conformance suite on the CPU engine; Contract's cache of contractions)"
go test -count=1 -race -run 'Conformance|ContractCacheConcurrent' ./cpu/
echo "== go test -race (an MPI rank as an engine: 2 processes under mpirun, the conformance suite among its tests)"
go test -count=1 -race -run TestRemote ./mpi/
echo "== bench/plot module (go vet, go build, go test; gofmt above covers it)"
(
	cd bench/plot
	go vet ./...
	CGO_ENABLED=0 go build -o /dev/null ./... # one main package: no binary left behind
	go test -count=1 ./...
)
