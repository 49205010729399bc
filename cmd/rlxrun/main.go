// Command rlxrun loads a .rlx artifact and runs it. It links no compiler
// package: only the artifact format, the loader and the target runtimes.
//
// Exit codes (stable, for scripts and CI):
//
//	0  success
//	1  outputs differ from --expect
//	3  a file could not be read or written, or the artifact is corrupt
//	4  an internal error in rlxrun (a bug: please report it)
//	5  the inputs do not fit the model (name, dtype, shape, no variant)
//	6  the artifact's device is not available here
//	7  a run needs more memory than --max-memory allows
//	64 the command line is wrong
//
// 2 is left to the Go runtime, which exits with it when it dies.
package main

import (
	"fmt"
	"io"
	"os"
)

const (
	exitOK       = 0
	exitMismatch = 1
	exitUsage    = 64 // sysexits EX_USAGE; 2 is what the Go runtime exits with on a fatal error
	exitIO       = 3
	exitInternal = 4
	exitInputs   = 5
	exitDevice   = 6 // the artifact's target device is not available here
	exitMemory   = 7 // a run needs more memory than --max-memory allows
)

type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf("rlxrun: "+format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "rlxrun: internal error: %v\nThis is a bug in rlxrun; please report it with the artifact that caused it.\n", r)
			code = exitInternal
		}
	}()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	if e, ok := err.(*exitError); ok {
		if e.err != nil {
			fmt.Fprintln(stderr, e.err)
		}
		return e.code
	}
	fmt.Fprintf(stderr, "rlxrun: %v\nRun 'rlxrun --help' for usage.\n", err)
	return exitUsage
}
