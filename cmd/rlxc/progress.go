package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// stageLog is rlxc build -v: one line per stage with its time, and one
// per variant generated.
type stageLog struct{ w io.Writer }

func (l stageLog) Stage(name string, d time.Duration) {
	fmt.Fprintf(l.w, "rlxc: %-20s %s\n", name, d.Round(time.Microsecond))
}

func (l stageLog) Variant(i, n int, binding string) {
	fmt.Fprintf(l.w, "rlxc: variant %d/%d generated (%s)\n", i, n, binding)
}

// progressBar shows a build's progress on a terminal: the variants
// generated, then the native code compiled, with the stage under way. It
// clears itself when the build ends, leaving the final lines alone.
type progressBar struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

// newProgress returns the observer rlxc build uses on w: a progress bar
// when w is a terminal, else nil (a log or a CI job gets the final lines
// only).
func newProgress(w io.Writer) *progressBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progressBar{w: w}
}

func (p *progressBar) Stage(name string, d time.Duration) {
	if p.bar != nil && name == "compile native code" {
		p.bar.Add(1)
	}
}

func (p *progressBar) Variant(i, n int, binding string) {
	if p.bar == nil {
		// One step per variant, and one for compiling them.
		p.bar = progressbar.NewOptions(n+1, progressbar.OptionSetWriter(p.w), progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30), progressbar.OptionShowCount())
	}
	p.bar.Describe("rlxc: generating " + binding)
	p.bar.Add(1)
	if i == n {
		p.bar.Describe("rlxc: compiling")
	}
}

// finish clears the bar, whatever state the build ended in.
func (p *progressBar) finish() {
	if p != nil && p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
	}
}
