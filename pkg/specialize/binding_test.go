package specialize

import (
	"strings"
	"testing"
)

func TestParseBindings(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string // bindings joined by ";"
		err   string
	}{
		{[]string{"seq=128"}, "seq=128", ""},
		{[]string{"seq=128,512"}, "seq=128;seq=512", ""},
		{[]string{"seq=128,512", "batch=1,2"}, "batch=1,seq=128;batch=1,seq=512;batch=2,seq=128;batch=2,seq=512", ""},
		{[]string{"seq=128,batch=2"}, "batch=2,seq=128", ""},
		{nil, "", ""},
		{[]string{"seq"}, "", "want NAME=V"},
		{[]string{"seq=abc"}, "", "non-negative integer"},
		{[]string{"seq=-1"}, "", "non-negative integer"},
		{[]string{"seq=1", "seq=2"}, "", "bound twice"},
		{[]string{"=3"}, "", "missing dim name"},
		{[]string{"seq=1,,2"}, "", "empty value"},
	} {
		bs, err := ParseBindings(tc.flags)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.flags, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.flags, err)
			continue
		}
		var got []string
		for _, b := range bs {
			got = append(got, b.String())
		}
		if s := strings.Join(got, ";"); s != tc.want {
			t.Errorf("%q: got %q, want %q", tc.flags, s, tc.want)
		}
	}
}
