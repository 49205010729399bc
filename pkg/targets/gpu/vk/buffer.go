//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Buffer is a storage buffer in host-visible, host-coherent memory that
// stays mapped for its lifetime, so Write and Read are plain copies.
type Buffer struct {
	d      *Device
	buf    uint64 // VkBuffer
	mem    uint64 // VkDeviceMemory
	size   int64  // what NewBuffer was asked for
	vkSize uint64 // the VkBuffer's size: size rounded up to 4, at least 4

	freed atomic.Bool
	mu    sync.RWMutex // Write and Read (RLock) against Free (Lock)
	data  []byte       // the mapping, vkSize bytes; nil once freed

	refs      int  // Commands that use it; guarded by d.mu
	destroyed bool // guarded by d.mu
}

// NewBuffer makes a storage buffer of size bytes (usable as a storage
// buffer and as a transfer source and destination), zero-filled. The
// Vulkan buffer is size rounded up to a multiple of 4 (at least 4), so a
// shader reading whole 32-bit words never runs off its end; Write and Read
// see exactly size bytes.
//
// The memory is HOST_VISIBLE|HOST_COHERENT and persistently mapped: the
// host reads and writes it directly and no staging copies are needed. That
// is what a CPU device (llvmpipe) or an integrated GPU wants; on a discrete
// GPU the shaders would then read over the bus, and a later version should
// put buffers in DEVICE_LOCAL memory and copy through a staging buffer.
func (d *Device) NewBuffer(size int64) (*Buffer, error) {
	if size < 0 || size > 1<<62 {
		return nil, fmt.Errorf("vulkan: NewBuffer: bad size %d", size)
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	vkSize := max(uint64(size+3)&^3, 4)
	info := &bufferCreateInfo{
		sType:       stBufferCreateInfo,
		size:        vkSize,
		usage:       bufferUsageStorageBuffer | bufferUsageTransferSrc | bufferUsageTransferDst,
		sharingMode: sharingModeExclusive,
	}
	b := &Buffer{d: d, size: size, vkSize: vkSize}
	if err := check("vkCreateBuffer", d.fn.createBuffer(d.dev, info, nil, &b.buf)); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			if b.mem != 0 {
				d.fn.freeMemory(d.dev, b.mem, nil)
			}
			d.fn.destroyBuffer(d.dev, b.buf, nil)
		}
	}()
	var req memoryRequirements
	d.fn.getBufferMemoryRequirements(d.dev, b.buf, &req)
	idx, found := d.hostMemoryType(req.memoryTypeBits)
	if !found {
		return nil, fmt.Errorf("vulkan: %s has no HOST_VISIBLE|HOST_COHERENT memory for storage buffers", d.name)
	}
	ai := &memoryAllocateInfo{sType: stMemoryAllocateInfo, allocationSize: req.size, memoryTypeIndex: idx}
	if r := d.fn.allocateMemory(d.dev, ai, nil, &b.mem); r != 0 {
		b.mem = 0
		return nil, &Error{Op: "vkAllocateMemory", Code: Result(r), Hint: fmt.Sprintf("%d bytes", req.size)}
	}
	if err := check("vkBindBufferMemory", d.fn.bindBufferMemory(d.dev, b.buf, b.mem, 0)); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	if err := check("vkMapMemory", d.fn.mapMemory(d.dev, b.mem, 0, wholeSize, 0, &p)); err != nil {
		return nil, err
	}
	b.data = unsafe.Slice((*byte)(p), vkSize)
	clear(b.data)
	d.mu.Lock()
	d.buffers[b] = struct{}{}
	d.mu.Unlock()
	ok = true
	return b, nil
}

// hostMemoryType picks the first memory type allowed by bits that is
// HOST_VISIBLE and HOST_COHERENT (drivers list the faster types first).
func (d *Device) hostMemoryType(bits uint32) (uint32, bool) {
	const want = memoryPropertyHostVisible | memoryPropertyHostCoherent
	for i := uint32(0); i < d.memProps.memoryTypeCount && i < 32; i++ {
		if bits&(1<<i) != 0 && d.memProps.memoryTypes[i].propertyFlags&want == want {
			return i, true
		}
	}
	return 0, false
}

// Size is the buffer's size in bytes, as given to NewBuffer.
func (b *Buffer) Size() int64 { return b.size }

func (b *Buffer) bounds(op string, off int64, n int) error {
	if off < 0 || off > b.size || int64(n) > b.size-off {
		return fmt.Errorf("vulkan: Buffer.%s of %d bytes at offset %d is out of bounds (the buffer has %d bytes)", op, n, off, b.size)
	}
	return nil
}

// Write copies p into the buffer at byte offset off. It must not overlap a
// Run that uses the buffer.
func (b *Buffer) Write(off int64, p []byte) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.data == nil {
		return fmt.Errorf("%w: Buffer.Write on a freed buffer", ErrFreed)
	}
	if err := b.bounds("Write", off, len(p)); err != nil {
		return err
	}
	copy(b.data[off:], p)
	return nil
}

// Read copies len(p) bytes at byte offset off out of the buffer into p. It
// must not overlap a Run that uses the buffer.
func (b *Buffer) Read(off int64, p []byte) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.data == nil {
		return fmt.Errorf("%w: Buffer.Read on a freed buffer", ErrFreed)
	}
	if err := b.bounds("Read", off, len(p)); err != nil {
		return err
	}
	copy(p, b.data[off:])
	return nil
}

// Free releases the buffer. If Commands still use it, the Vulkan objects
// live on until the last of them is freed, but running those Commands is
// an error. Freeing twice, or after Device.Close, is a no-op.
func (b *Buffer) Free() {
	if b == nil || b.freed.Swap(true) {
		return
	}
	b.mu.Lock()
	b.data = nil
	b.mu.Unlock()
	d := b.d
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.buffers, b)
	if b.refs == 0 {
		d.destroyBuffer(b)
	}
}

// destroyBuffer destroys b's Vulkan objects; d.mu is held.
func (d *Device) destroyBuffer(b *Buffer) {
	if b.destroyed || d.gone {
		return
	}
	b.destroyed = true
	d.fn.unmapMemory(d.dev, b.mem)
	d.fn.destroyBuffer(d.dev, b.buf, nil)
	d.fn.freeMemory(d.dev, b.mem, nil)
}
