// Command rlxc is the rlx compiler: it checks, formats and (in later
// stages) builds HIR models into deployable .rlx artifacts.
//
// Exit codes (stable, for scripts and CI):
//
//	0  success
//	1  the input has errors (syntax, types, shapes); they are on stderr
//	3  a file could not be read or written
//	4  an internal error in rlxc (a bug: please report it)
//	5  a build tool the target needs is not installed
//	64 the command line is wrong (unknown flag, missing argument)
//
// 2 is left to the Go runtime, which exits with it when it dies.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes, documented in docs/cli.md.
const (
	exitOK       = 0
	exitInput    = 1
	exitUsage    = 64 // sysexits EX_USAGE; 2 is what the Go runtime exits with on a fatal error
	exitIO       = 3
	exitInternal = 4
	exitTool     = 5 // a build tool the target needs is not installed
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes rlxc with args and returns the exit code; main is a thin
// wrapper so tests can drive the whole CLI in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "rlxc: internal error: %v\nThis is a bug in rlxc; please report it with the input that caused it.\n", r)
			code = exitInternal
		}
	}()
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	if e, ok := err.(*exitError); ok {
		if e.err != nil && e.err.Error() != "" {
			fmt.Fprintln(stderr, e.err)
		}
		return e.code
	}
	// Anything else comes from cobra's flag and argument parsing.
	fmt.Fprintf(stderr, "rlxc: %v\nRun 'rlxc --help' for usage.\n", err)
	return exitUsage
}
