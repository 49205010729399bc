// Package vk is rlx's Vulkan compute runtime: it opens a Vulkan device,
// makes storage buffers and compute pipelines from SPIR-V, records
// sequences of dispatches and runs them. It is what rlxrun needs to run a
// Vulkan artifact, and nothing more: no graphics, no images, no surfaces.
// It imports nothing from the compiler.
//
// # No cgo
//
// The Vulkan loader, libvulkan.so.1, is opened at run time with
// github.com/ebitengine/purego (dlopen, and Go functions bound to C
// function pointers), so the package builds with CGO_ENABLED=0, needs no
// Vulkan headers to build, and a binary that uses it still starts on a
// machine without Vulkan: [Open] then returns [ErrNoLoader] or
// [ErrNoDevice]. vkGetInstanceProcAddr is the only symbol looked up with
// dlsym; instance functions come from it and device functions from
// vkGetDeviceProcAddr. The Vulkan structs are Go structs laid out as C lays
// them out on LP64 (layout_test.go checks every size and offset against
// numbers measured with gcc), and the Go memory they point at is pinned
// (runtime.Pinner) for each call. The runtime is wired up on Linux (and on
// FreeBSD with cgo), amd64 and arm64; elsewhere Open returns
// [ErrUnsupported].
//
// # Choices
//
// Memory: every [Buffer] is HOST_VISIBLE|HOST_COHERENT memory, mapped for
// its lifetime, so Write and Read are plain copies and there is no staging.
// That is right for a CPU device (llvmpipe) and integrated GPUs; on a
// discrete GPU shaders would read it over the bus, and buffers should
// rather live in DEVICE_LOCAL memory with copies through a staging buffer.
// Each Buffer is its own allocation.
//
// Pipelines: one descriptor set (set 0) of storage buffers, bindings 0..n-1,
// and no push constants; scalars travel in a buffer. [Device.NewPipeline]
// checks the SPIR-V against that layout first, because drivers do not
// validate modules and may crash on a bad one.
//
// Commands: [Device.Record] turns a list of dispatches into one primary
// command buffer, recorded once and submitted by every [Commands.Run], with
// its own descriptor sets, pools and fence. A memory barrier separates
// consecutive dispatches, so each one sees what the previous ones wrote,
// and a last one makes the results visible to the host. Run submits and
// waits; there is no asynchronous submission.
//
// Features: Open enables the optional shader features kernels may use
// (64-bit and 16-bit integers and floats, 8-bit integers, 8- and 16-bit
// storage) when the device has them; [Device.Features] lists them.
// RLX_VULKAN_DEVICE=<index> chooses the physical device.
//
// # Threads
//
// Vulkan objects are not tied to OS threads, so unlike CUDA nothing here
// locks a goroutine to a thread. A Device and everything made from it may
// be used from several goroutines: the queue is guarded by a mutex, each
// Commands has its own pools, Runs of one Commands are serialized, and
// Free and Close wait for what uses the object. Writing or reading a
// Buffer while a Run that uses it is in flight is a data race on the
// device's memory, which the caller must avoid.
//
// # Testing
//
// The tests compile GLSL with glslangValidator and run on any Vulkan
// device (llvmpipe from mesa-vulkan-drivers is enough); they skip without
// one, or fail when CI=true. llvmpipe checks little by itself, so
// TestValidation reruns them under the Khronos validation layer
// (vulkan-validationlayers) with synchronization validation, which reports
// a feature used without being enabled or a missing barrier.
package vk
