package prepcache

import "testing"

func TestCache(t *testing.T) {
	c := New[int](2)
	if _, ok := c.Get("a"); ok {
		t.Fatal("hit in an empty cache")
	}
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatal("a missing")
	}
	c.Put("c", 3) // evicts b, the least recently used
	if _, ok := c.Get("b"); ok {
		t.Fatal("b not evicted")
	}
	if st := c.Stats(); st.Hits != 1 || st.Misses != 2 || st.Entries != 2 {
		t.Fatalf("stats %+v", st)
	}
	c.Clear()
	if st := c.Stats(); st.Entries != 0 || st.Hits != 1 {
		t.Fatalf("stats after Clear %+v", st)
	}
}

func TestGetBytes(t *testing.T) {
	c := New[int](2)
	c.Put("key", 7)
	if v, ok := c.GetBytes([]byte("key")); !ok || v != 7 {
		t.Fatal("GetBytes missed a stored key")
	}
	if _, ok := c.GetBytes([]byte("other")); ok {
		t.Fatal("GetBytes hit an absent key")
	}
	if st := c.Stats(); st.Hits != 1 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
	k := []byte("key")
	if n := testing.AllocsPerRun(100, func() { c.GetBytes(k) }); n != 0 {
		t.Fatalf("GetBytes allocates %v times", n)
	}
}
