package gemm

import (
	"os"
	"strconv"
	"strings"
)

// Cache sizes in bytes used to choose block sizes: per-core L1 data and L2,
// and the shared L3. They are read once from the OS where it tells (Linux
// sysfs) and fall back to conservative defaults elsewhere.
var cacheL1, cacheL2, cacheL3 = cacheSizes()

func cacheSizes() (l1, l2, l3 int) {
	l1, l2, l3 = 32<<10, 256<<10, 4<<20
	for i := 0; i < 8; i++ {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(i) + "/"
		lv, err1 := os.ReadFile(dir + "level")
		ty, err2 := os.ReadFile(dir + "type")
		sz, err3 := os.ReadFile(dir + "size")
		if err1 != nil || err2 != nil || err3 != nil {
			break
		}
		t := strings.TrimSpace(string(ty))
		if t != "Data" && t != "Unified" {
			continue
		}
		n := parseSize(strings.TrimSpace(string(sz)))
		if n <= 0 {
			continue
		}
		switch strings.TrimSpace(string(lv)) {
		case "1":
			l1 = n
		case "2":
			l2 = n
		case "3":
			l3 = n
		}
	}
	// Keep the numbers sane whatever the OS said.
	l1 = min(max(l1, 16<<10), 128<<10)
	l2 = min(max(l2, 128<<10), 4<<20)
	l3 = min(max(l3, l2), 64<<20)
	return l1, l2, l3
}

func parseSize(s string) int {
	mul := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n * mul
}

// blocking holds the cache block sizes of the packed driver in real
// elements: kc (depth of a packed panel), mc (rows of a packed A block) and
// nc (columns of a packed B panel).
type blocking struct{ mc, kc, nc int }

// blockingFor sizes the blocks for kernel k on elements of esize bytes: a
// B micro-panel (kc×nr) fills k.l1B percent of L1 (kc at most 512), an A
// block (mc×kc) about half of L2, and a B panel (kc×nc) a slice of the
// shared L3.
func blockingFor[R float](k *kernel[R], esize int) blocking {
	mr, nr := k.mr, k.nr
	kc := cacheL1 * k.l1B / 100 / (nr * esize)
	kc = min(max(kc&^7, 64), 512)
	mc := cacheL2 / 2 / (kc * esize)
	mc = max(mc/mr*mr, mr)
	nc := min(cacheL3/4, 8<<20) / (kc * esize)
	nc = max(nc/nr*nr, nr)
	return blocking{mc: mc, kc: kc, nc: nc}
}
