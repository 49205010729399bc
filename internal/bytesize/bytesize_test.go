package bytesize

import "testing"

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"4096", 4096}, {"512MiB", 512 << 20}, {"8GB", 8e9}, {"1.5GiB", 3 << 29}, {"30MB", 30e6}, {"2g", 2 << 30}, {" 10 KiB ", 10240}, {"0", 0}, {"7B", 7}} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1GiB", "ten", "1e30TiB", "NaN"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{{512, "512 B"}, {1536, "1.5 KiB"}, {64 << 30, "64 GiB"}, {3 << 50, "3 PiB"}} {
		if got := Format(c.in); got != c.want {
			t.Errorf("Format(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}
