// Package native loads and calls the CPU kernels the compiler builds as
// native code, without cgo.
//
// The compiler writes the kernels in C and compiles each for one CPU
// [Level] with clang into a small freestanding ELF shared object
// (-ffreestanding -nostdlib -fPIC -shared -fuse-ld=lld -Wl,-z,defs
// -fvisibility=hidden, the kernels marked visibility("default")), checks
// it with [Validate], and the artifact carries its bytes. At run time
// [Best] picks the level, [Load] validates the object again and maps it
// with a loader of our own, [Module.Func] finds a kernel and [Call]
// calls it through purego.
//
// The loader is ours rather than the C library's (writing the object to
// a memfd and dlopen-ing it) because native code needs none of what
// ld.so does and must not do any of it: no file, no process-global
// dlopen state, no other object loaded, no constructor run; an object
// that imports a symbol, asks for code at load, thread-local storage or
// a writable and executable page is refused before any memory is
// executable, with an error that says why; and it works the same under
// qemu-user. What it does load is one mapping: the segments copied in,
// RELATIVE relocations applied, each segment's pages given its
// permissions.
//
// The package imports no compiler package (the standard library,
// golang.org/x/sys and purego only): rlxrun links it.
package native
