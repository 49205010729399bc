package lir

import "fmt"

// CheckRefs checks what every backend relies on before it runs a step:
// each step has an operation, each buffer it names exists, and no step
// writes a weight (weights are a read-only mapping) or an input.
func (p *Program) CheckRefs() error {
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Op == nil {
			return fmt.Errorf("step %d (%s) has no operation", i, s.Src)
		}
		for _, r := range s.Op.Refs() {
			if r.Buf < 0 || int(r.Buf) >= len(p.Buffers) {
				return fmt.Errorf("step %d (%s, %s) refers to missing buffer %d", i, s.Op.Kind(), s.Src, r.Buf)
			}
			if k := p.Buffers[r.Buf].Kind; r.Write && (k == BufWeight || k == BufInput) {
				return fmt.Errorf("step %d (%s, %s) writes buffer %d, which is a read-only %s", i, s.Op.Kind(), s.Src, r.Buf, k)
			}
		}
	}
	return nil
}
