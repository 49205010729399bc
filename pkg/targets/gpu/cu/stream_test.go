package cu

import "testing"

// TestOpenGraph chains three dependent launches (c = a + b, then d = c *
// 2, then c = d + b) on a stream, as launches, as a graph replayed twice
// over new inputs, and under Profile, with the copies on the same stream:
// each way must give the chain's result, which only holds if every step
// saw the one before it and the copies were ordered around them.
func TestOpenGraph(t *testing.T) {
	c := needGPU(t)
	m := module(t, c)
	vadd, err := m.Function("vadd")
	if err != nil {
		t.Fatal(err)
	}
	scale, err := m.Function("scale")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Destroy(); err != nil {
			t.Error(err)
		}
		if err := s.Destroy(); err != nil {
			t.Errorf("second Destroy: %v", err)
		}
	}()
	const n = 5000
	bytes := int64(4 * n)
	var bufs [4]DevicePtr
	for i := range bufs {
		if bufs[i], err = c.Alloc(bytes); err != nil {
			t.Fatal(err)
		}
		defer c.Free(bufs[i])
	}
	da, db, dc, dd := bufs[0], bufs[1], bufs[2], bufs[3]
	grid, block := [3]uint32{(n + 127) / 128, 1, 1}, [3]uint32{128, 1, 1}
	steps := []Step{
		{F: vadd, Grid: grid, Block: block, Args: []any{da, db, dc, uint32(n)}},
		{F: scale, Grid: grid, Block: block, Args: []any{dc, dd, float32(2), uint32(n)}},
		{F: vadd, Grid: grid, Block: block, Args: []any{dd, db, dc, uint32(n)}},
	}
	a, b := make([]float32, n), make([]float32, n)
	fill := func(round int) {
		for i := range a {
			a[i] = float32(i%97)*0.25 + float32(round)
			b[i] = float32(i%13) - 6
		}
		if err := s.CopyToDevice(da, asBytes(a)); err != nil {
			t.Fatal(err)
		}
		if err := s.CopyToDevice(db, asBytes(b)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(how string) {
		t.Helper()
		got := make([]float32, n)
		if err := s.CopyFromDevice(asBytes(got), dc); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		for i := range got {
			if want := (a[i]+b[i])*2 + b[i]; got[i] != want {
				t.Fatalf("%s: c[%d] = %v, want %v", how, i, got[i], want)
			}
		}
	}
	fill(0)
	if err := s.LaunchOn(steps); err != nil {
		t.Fatal(err)
	}
	check("launches")

	g, err := s.NewGraph(steps)
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != len(steps) {
		t.Errorf("graph of %d launches, want %d", g.Len(), len(steps))
	}
	for round := 1; round <= 2; round++ {
		fill(round)
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
		check("graph replay")
	}
	if err := g.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := g.Destroy(); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if err := g.Launch(s); err == nil {
		t.Error("a destroyed graph launched")
	}

	fill(3)
	times, err := s.Profile(steps)
	if err != nil {
		t.Fatal(err)
	}
	check("profile")
	if len(times) != len(steps) {
		t.Fatalf("%d times for %d steps", len(times), len(steps))
	}
	for i, d := range times {
		if d < 0 {
			t.Errorf("step %d took %v", i, d)
		}
	}
	t.Logf("profiled: %v", times)

	// The same as one graph with an event record node around each step.
	p, err := s.NewProfile(steps)
	if err != nil {
		t.Fatalf("NewProfile: %v", err)
	}
	for round := 5; round <= 6; round++ {
		fill(round)
		gtimes, err := p.Run(s)
		if err != nil {
			t.Fatal(err)
		}
		check("profile graph")
		if len(gtimes) != len(steps) {
			t.Fatalf("%d times for %d steps", len(gtimes), len(steps))
		}
		for i, d := range gtimes {
			if d < 0 {
				t.Errorf("step %d took %v", i, d)
			}
		}
		t.Logf("profiled as a graph: %v", gtimes)
	}
	if err := p.Destroy(); err != nil {
		t.Fatal(err)
	}

	// A step the driver refuses (a block too large) fails the capture
	// cleanly, and the stream works afterwards.
	bad := append([]Step(nil), steps...)
	bad[1].Block = [3]uint32{4096, 1, 1}
	if _, err := s.NewGraph(bad); err == nil {
		t.Error("a graph with a 4096-thread block was captured")
	}
	fill(4)
	if err := s.LaunchOn(steps); err != nil {
		t.Fatalf("launch after a failed capture: %v", err)
	}
	check("launches after a failed capture")
}
