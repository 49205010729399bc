// Package specialize turns a symbolic model into concrete variants, one per
// dim binding: concrete shapes, the shape-dependent kernel and layout
// decisions (Passes, gated by a backend's Caps), the arena plan, and the
// schedule, the target-neutral LIR program that backends consume.
package specialize

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Binding gives concrete values to symbolic dims: {"batch": 1, "seq": 128}.
type Binding map[string]int64

// String prints the binding sorted by name: "batch=1,seq=128".
func (b Binding) String() string {
	names := make([]string, 0, len(b))
	for n := range b {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatInt(b[n], 10)
	}
	return strings.Join(parts, ",")
}

// ParseBindings reads --bind flags. Each flag is NAME=V[,V...] or several
// such assignments separated by commas (seq=128,batch=2); a dim given a list
// of values makes one variant per value, and several dims make the product
// of their lists. Bindings come out in a stable order: dims sorted by name,
// values in the order given.
func ParseBindings(flags []string) ([]Binding, error) {
	values := map[string][]int64{}
	var order []string
	for _, f := range flags {
		var name string
		for _, part := range strings.Split(f, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				return nil, fmt.Errorf("--bind %q: empty value (want NAME=V[,V...], e.g. seq=128,512)", f)
			}
			v := part
			if i := strings.IndexByte(part, '='); i >= 0 {
				name, v = strings.TrimSpace(part[:i]), strings.TrimSpace(part[i+1:])
				if name == "" {
					return nil, fmt.Errorf("--bind %q: missing dim name before '='", f)
				}
				if _, dup := values[name]; dup {
					return nil, fmt.Errorf("--bind %q: dim %s is bound twice", f, name)
				}
				order = append(order, name)
				values[name] = nil
			} else if name == "" {
				return nil, fmt.Errorf("--bind %q: want NAME=V[,V...], e.g. seq=128", f)
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("--bind %q: dim %s needs a non-negative integer, found %q", f, name, v)
			}
			values[name] = append(values[name], n)
		}
	}
	sort.Strings(order)
	out := []Binding{{}}
	for _, name := range order {
		var next []Binding
		for _, b := range out {
			for _, v := range values[name] {
				nb := Binding{}
				for k, x := range b {
					nb[k] = x
				}
				nb[name] = v
				next = append(next, nb)
			}
		}
		out = next
	}
	return out, nil
}
