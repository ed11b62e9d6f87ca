package prepcache

import "testing"

func TestCache(t *testing.T) {
	c := New[int](2)
	if _, ok := c.Get([]byte("a")); ok {
		t.Fatal("hit in an empty cache")
	}
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get([]byte("a")); !ok || v != 1 {
		t.Fatal("a missing")
	}
	c.Put("c", 3) // evicts b, the least recently used
	if _, ok := c.Get([]byte("b")); ok {
		t.Fatal("b not evicted")
	}
	if st := c.Stats(); st.Hits != 1 || st.Misses != 2 || st.Entries != 2 {
		t.Fatalf("stats %+v", st)
	}
	c.Reset(2)
	if st := c.Stats(); st.Entries != 0 || st.Hits != 1 {
		t.Fatalf("stats after Clear %+v", st)
	}
}

func TestResetLimit(t *testing.T) {
	c := New[int](2)
	c.Reset(1)
	c.Put("a", 1)
	c.Put("b", 2) // the new limit evicts a
	if _, ok := c.Get([]byte("a")); ok || c.Stats().Entries != 1 {
		t.Fatal("Reset did not apply the new limit")
	}
}

func TestGetDoesNotAllocate(t *testing.T) {
	c := New[int](2)
	c.Put("key", 7)
	k := []byte("key")
	if n := testing.AllocsPerRun(100, func() { c.Get(k) }); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}
