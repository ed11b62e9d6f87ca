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
