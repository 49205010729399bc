package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"target", "cache-dir", "bind", "weights"}
	for _, c := range []struct{ in, want string }{
		{"targt", "target"}, {"cache_dir", "cache-dir"}, {"bnd", "bind"}, {"zzzzzz", ""}, {"target", "target"},
	} {
		if got := Nearest(c.in, known); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d", d)
	}
}
