package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rlx-project/rlx/pkg/artifact"
	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/loader"
	"github.com/spf13/cobra"
)

func newInspectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "inspect FILE.rlx",
		Short: "Print an artifact's signature and variants",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := openModel(args[0], 1, "")
			if err != nil {
				return err
			}
			defer m.Close()
			w := cmd.OutOrStdout()
			man := m.Manifest
			fmt.Fprintf(w, "%s: module %s, target %s, built by %s\n", args[0], man.Module, man.Provenance.Target, man.Provenance.Compiler)
			for _, t := range man.Signature.Inputs {
				fmt.Fprintf(w, "  in  %s : %s[%s]\n", t.Name, t.DType, strings.Join(t.Shape, ", "))
			}
			for _, t := range man.Signature.Outputs {
				fmt.Fprintf(w, "  out %s : %s[%s]\n", t.Name, t.DType, strings.Join(t.Shape, ", "))
			}
			for _, v := range m.Variants() {
				fmt.Fprintf(w, "  variant %s: %d kernels, arena %d bytes\n", artifact.BindingText(v.Binding), v.Steps, v.ArenaBytes)
			}
			return nil
		},
	}
}

func newCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE.rlx",
		Short: "Verify an artifact (every section's digest and the programs) without running it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := openModel(args[0], 1, "")
			if err != nil {
				return err
			}
			defer m.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%d variants)\n", args[0], len(m.Variants()))
			return nil
		},
	}
}

func newBenchCmd() *cobra.Command {
	var f runFlags
	var warmup, runs int
	var dur time.Duration
	var asJSON, profile, runTimes bool
	cmd := &cobra.Command{
		Use:   "bench FILE.rlx [--fill random] [--threads N] [--warmup N] [--runs N | --time D]",
		Short: "Time runs of an artifact: latency percentiles and throughput",
		Long: `bench runs the model --warmup times untimed, then --runs times (or for
--time), and prints latency percentiles (p50, p90, p99) and throughput.
--profile adds the time spent in each kernel, sorted (cpu artifacts; cuda artifacts
launch one kernel at a time between device timers for it); on cpu its "threads"
column is how many worker threads a kernel kept busy on average (its chunks' run
time over its wall time), which shows the kernels that do not scale with
--threads. Profile one bench at a time: the worker pool's clock is shared. Inputs as for a run;
without any, --fill random is used. Runs after the first write into the same output
tensors, as a serving loop that reuses them does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(f.inputs) == 0 && f.fill == "" {
				f.fill = "random"
			}
			m, err := openModel(args[0], f.threads, f.maxMemory)
			if err != nil {
				return err
			}
			defer m.Close()
			if profile && !m.ProfilesSteps() {
				return fail(exitUsage, "--profile times the steps of cpu and cuda artifacts; %s runs on %s", args[0], m.Device())
			}
			inputs, err := gatherInputs(m, &f)
			if err != nil {
				return err
			}
			info, err := m.Info(inputs)
			if err != nil {
				return runFailed(err)
			}
			// Every run writes the one set of outputs, as a serving loop
			// would (Model.RunInto): fresh ones each run would time the Go
			// allocator's page faults too.
			var outs []loader.Named
			for i := 0; i < warmup; i++ {
				if outs, err = m.RunInto(outs, inputs); err != nil {
					return runFailed(err)
				}
			}
			var lat []time.Duration
			kernelTime := map[kernelKey]loader.StepTime{}
			prof := func(step int, s *lir.Step, t loader.StepTime) {
				k := kernelKey{string(s.Kind()), s.Src}
				if t.Generated != "" {
					// native code: named by what it computes
					k.kind = "native " + t.Generated
				}
				kt := kernelTime[k]
				kt.Wall += t.Wall
				kt.Busy += t.Busy
				kernelTime[k] = kt
			}
			start := time.Now()
			for i := 0; runs > 0 && i < runs || runs <= 0 && time.Since(start) < dur; i++ {
				t0 := time.Now()
				if profile {
					outs, err = m.Profile(outs, inputs, prof)
				} else {
					outs, err = m.RunInto(outs, inputs)
				}
				if err != nil {
					return runFailed(err)
				}
				lat = append(lat, time.Since(t0))
			}
			total := time.Since(start)
			runOrder := append([]time.Duration(nil), lat...)
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				if len(lat) == 0 {
					return 0
				}
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			res := benchJSON{runHeader: header(benchSchema, args[0], info), Warmup: warmup, Runs: len(lat),
				P50: pct(0.5), P90: pct(0.9), P99: pct(0.99), Throughput: float64(len(lat)) / total.Seconds()}
			if runTimes {
				for _, d := range runOrder {
					res.RunMS = append(res.RunMS, float64(d.Microseconds())/1000)
				}
			}
			if profile {
				var sum time.Duration
				for _, t := range kernelTime {
					sum += t.Wall
				}
				for k, t := range kernelTime {
					row := profileRow{Kind: k.kind, Src: k.src, MSPerRun: float64(t.Wall.Microseconds()) / 1000 / float64(len(lat)),
						Percent: 100 * float64(t.Wall) / float64(sum)}
					if t.Busy > 0 && t.Wall > 0 {
						row.Threads = float64(t.Busy) / float64(t.Wall)
					}
					res.Profile = append(res.Profile, row)
				}
				sort.Slice(res.Profile, func(i, j int) bool {
					a, b := res.Profile[i], res.Profile[j]
					return a.MSPerRun > b.MSPerRun || a.MSPerRun == b.MSPerRun && a.Src < b.Src
				})
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(w).Encode(res)
			}
			fmt.Fprintf(w, "%s: %s: %d runs, p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, %.1f runs/s\n", args[0], describe(info), len(lat), res.P50, res.P90, res.P99, res.Throughput)
			if len(res.Profile) > 0 && info.Device == "cpu" {
				// threads: the step's busy thread-time over its wall time,
				// how many of the pool's threads it kept busy on average;
				// "-" where it split no work over the pool.
				fmt.Fprintf(w, "  %7s  %16s  %7s  %-24s %s\n", "share", "time", "threads", "kind", "source")
				for _, r := range res.Profile {
					th := "-"
					if r.Threads > 0 {
						th = fmt.Sprintf("%.2f", r.Threads)
					}
					fmt.Fprintf(w, "  %6.2f%%  %9.3f ms/run  %7s  %-24s %s\n", r.Percent, r.MSPerRun, th, r.Kind, r.Src)
				}
			} else {
				for _, r := range res.Profile {
					fmt.Fprintf(w, "  %6.2f%%  %9.3f ms/run  %-12s %s\n", r.Percent, r.MSPerRun, r.Kind, r.Src)
				}
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&warmup, "warmup", 3, "untimed runs first")
	cmd.Flags().IntVar(&runs, "runs", 0, "timed runs (default: run for --time)")
	cmd.Flags().DurationVar(&dur, "time", 2*time.Second, "how long to run when --runs is not given")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&profile, "profile", false, "time each kernel")
	cmd.Flags().BoolVar(&runTimes, "run-times", false, "with --json: every timed run's milliseconds, in order (run_ms)")
	return cmd
}

// kernelKey is one step of the profile: its kind and source.
type kernelKey struct{ kind, src string }

// benchJSON is rlxrun bench --json.
type benchJSON struct {
	runHeader
	Warmup     int          `json:"warmup"`
	Runs       int          `json:"runs"`
	P50        float64      `json:"p50_ms"`
	P90        float64      `json:"p90_ms"`
	P99        float64      `json:"p99_ms"`
	Throughput float64      `json:"throughput_per_s"`
	RunMS      []float64    `json:"run_ms,omitempty"`
	Profile    []profileRow `json:"profile,omitempty"`
}

// profileRow is one step's share of a profiled bench.
type profileRow struct {
	Kind     string  `json:"kind"`
	Src      string  `json:"src"`
	MSPerRun float64 `json:"ms_per_run"`
	Percent  float64 `json:"percent"`
	// Threads is, on cpu, the step's busy thread-time over its wall time
	// (omitted where it split no work over the worker pool).
	Threads float64 `json:"threads,omitempty"`
}
