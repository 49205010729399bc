//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"errors"
	"fmt"
	"github.com/ebitengine/purego"
	"runtime"
	"sync"
	"unsafe"
)

// Commands is a recorded sequence of dispatches: one primary command
// buffer, its descriptor sets and a fence, reusable by Run any number of
// times.
type Commands struct {
	d *Device

	mu    sync.Mutex // Run and Free
	freed bool       // guarded by mu

	destroyed bool // guarded by d.mu

	cmdPool  uint64  // VkCommandPool
	descPool uint64  // VkDescriptorPool
	fence    uint64  // VkFence
	cmd      uintptr // VkCommandBuffer

	pipelines []*Pipeline // one per dispatch: each holds a reference
	buffers   []*Buffer   // one per binding: each holds a reference

	// submit is Run's vkQueueSubmit info, pointing at cmd: made and
	// pinned once, by Record, so that a run allocates nothing.
	submit submitInfo
	pin    runtime.Pinner
}

// Record records ds into a reusable command buffer. Each dispatch gets its
// own descriptor set (binding i is the whole of Buffers[i]); consecutive
// dispatches are separated by a compute-to-compute memory barrier (shader
// writes made visible to shader reads and writes), so a dispatch sees what
// the ones before it wrote, and a last compute-to-host barrier makes the
// results visible to Buffer.Read after Run. The pipelines and buffers must
// stay alive (not freed) as long as the Commands is run.
//
// Each Commands has its own command pool and descriptor pool, so Record may
// be called from several goroutines.
func (d *Device) Record(ds []Dispatch) (*Commands, error) {
	if len(ds) == 0 {
		return nil, errors.New("vulkan: Record: no dispatches")
	}
	total := 0
	for i, x := range ds {
		p := x.Pipeline
		if p == nil {
			return nil, fmt.Errorf("vulkan: Record: dispatch %d has no pipeline", i)
		}
		if p.d != d {
			return nil, fmt.Errorf("vulkan: Record: dispatch %d's pipeline belongs to another device", i)
		}
		if len(x.Buffers) != p.numBindings {
			return nil, fmt.Errorf("vulkan: Record: dispatch %d has %d buffers; its pipeline has %d bindings", i, len(x.Buffers), p.numBindings)
		}
		if len(x.Push) != p.pushBytes {
			return nil, fmt.Errorf("vulkan: Record: dispatch %d has %d bytes of push constants; its pipeline takes %d", i, len(x.Push), p.pushBytes)
		}
		for j, b := range x.Buffers {
			if b == nil {
				return nil, fmt.Errorf("vulkan: Record: dispatch %d buffer %d is nil", i, j)
			}
			if b.d != d {
				return nil, fmt.Errorf("vulkan: Record: dispatch %d buffer %d belongs to another device", i, j)
			}
			if b.vkSize > uint64(d.limits.MaxStorageBufferRange) {
				return nil, fmt.Errorf("vulkan: Record: dispatch %d buffer %d has %d bytes; a binding on %s covers at most %d", i, j, b.size, d.name, d.limits.MaxStorageBufferRange)
			}
		}
		for k, g := range x.Groups {
			if g > d.limits.MaxComputeWorkGroupCount[k] {
				return nil, fmt.Errorf("vulkan: Record: dispatch %d has %d groups in dimension %d; %s allows at most %d", i, g, k, d.name, d.limits.MaxComputeWorkGroupCount[k])
			}
		}
		total += p.numBindings
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	c := &Commands{d: d}
	if err := c.ref(ds); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			d.mu.Lock()
			d.destroyCommands(c)
			d.mu.Unlock()
		}
	}()
	if err := c.record(ds, total); err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.commands[c] = struct{}{}
	d.mu.Unlock()
	ok = true
	return c, nil
}

// ref takes a reference on every pipeline and buffer ds uses, failing if
// one was freed. Taking them under d.mu means a concurrent Free either
// comes first (and ref sees it) or leaves the objects alive.
func (c *Commands) ref(ds []Dispatch) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, x := range ds {
		if x.Pipeline.freed.Load() {
			d.unref(c)
			return fmt.Errorf("%w: Record: dispatch %d's pipeline was freed", ErrFreed, i)
		}
		x.Pipeline.refs++
		c.pipelines = append(c.pipelines, x.Pipeline)
		for j, b := range x.Buffers {
			if b.freed.Load() {
				d.unref(c)
				return fmt.Errorf("%w: Record: dispatch %d buffer %d was freed", ErrFreed, i, j)
			}
			b.refs++
			c.buffers = append(c.buffers, b)
		}
	}
	return nil
}

// unref drops c's references, destroying what was freed and is no longer
// used; d.mu is held.
func (d *Device) unref(c *Commands) {
	for _, p := range c.pipelines {
		p.refs--
		if p.refs == 0 && p.freed.Load() {
			d.destroyPipeline(p)
		}
	}
	for _, b := range c.buffers {
		b.refs--
		if b.refs == 0 && b.freed.Load() {
			d.destroyBuffer(b)
		}
	}
	c.pipelines, c.buffers = nil, nil
}

// record creates c's pools, descriptor sets, command buffer and fence and
// records ds.
func (c *Commands) record(ds []Dispatch, total int) error {
	d := c.d
	var pin runtime.Pinner
	defer pin.Unpin()

	size := &descriptorPoolSize{typ: descriptorTypeStorageBuffer, descriptorCount: uint32(max(total, 1))}
	pin.Pin(size)
	dpi := &descriptorPoolCreateInfo{sType: stDescriptorPoolCreateInfo, maxSets: uint32(len(ds)), poolSizeCount: 1, pPoolSizes: size}
	if err := check("vkCreateDescriptorPool", d.fn.createDescriptorPool(d.dev, dpi, nil, &c.descPool)); err != nil {
		return err
	}
	layouts := make([]uint64, len(ds))
	for i, x := range ds {
		layouts[i] = x.Pipeline.setLayout
	}
	pin.Pin(&layouts[0])
	sets := make([]uint64, len(ds))
	dsa := &descriptorSetAllocateInfo{sType: stDescriptorSetAllocateInfo, descriptorPool: c.descPool, descriptorSetCount: uint32(len(ds)), pSetLayouts: &layouts[0]}
	if err := check("vkAllocateDescriptorSets", d.fn.allocateDescriptorSets(d.dev, dsa, &sets[0])); err != nil {
		return err
	}
	if total > 0 {
		infos := make([]descriptorBufferInfo, 0, total)
		writes := make([]writeDescriptorSet, 0, total)
		for i, x := range ds {
			for j, b := range x.Buffers {
				infos = append(infos, descriptorBufferInfo{buffer: b.buf, rng: wholeSize})
				writes = append(writes, writeDescriptorSet{
					sType:           stWriteDescriptorSet,
					dstSet:          sets[i],
					dstBinding:      uint32(j),
					descriptorCount: 1,
					descriptorType:  descriptorTypeStorageBuffer,
					pBufferInfo:     &infos[len(infos)-1],
				})
			}
		}
		pin.Pin(&infos[0])
		pin.Pin(&writes[0])
		d.fn.updateDescriptorSets(d.dev, uint32(len(writes)), &writes[0], 0, nil)
	}

	cpi := &commandPoolCreateInfo{sType: stCommandPoolCreateInfo, queueFamilyIndex: d.family}
	if err := check("vkCreateCommandPool", d.fn.createCommandPool(d.dev, cpi, nil, &c.cmdPool)); err != nil {
		return err
	}
	cai := &commandBufferAllocateInfo{sType: stCommandBufferAllocateInfo, commandPool: c.cmdPool, level: commandBufferLevelPrimary, commandBufferCount: 1}
	if err := check("vkAllocateCommandBuffers", d.fn.allocateCommandBuffers(d.dev, cai, &c.cmd)); err != nil {
		return err
	}
	if err := check("vkBeginCommandBuffer", d.fn.beginCommandBuffer(c.cmd, &commandBufferBeginInfo{sType: stCommandBufferBeginInfo})); err != nil {
		return err
	}
	between := &memoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessShaderWrite, dstAccessMask: accessShaderRead | accessShaderWrite}
	for i, x := range ds {
		if i > 0 {
			d.fn.cmdPipelineBarrier(c.cmd, pipelineStageComputeShaderBit, pipelineStageComputeShaderBit, 0, 1, between, 0, nil, 0, nil)
		}
		d.fn.cmdBindPipeline(c.cmd, pipelineBindPointCompute, x.Pipeline.pipeline)
		d.fn.cmdBindDescriptorSets(c.cmd, pipelineBindPointCompute, x.Pipeline.layout, 0, 1, &sets[i], 0, nil)
		if len(x.Push) > 0 {
			// The values are copied into the command buffer here.
			pin.Pin(&x.Push[0])
			d.fn.cmdPushConstants(c.cmd, x.Pipeline.layout, shaderStageCompute, 0, uint32(len(x.Push)), unsafe.Pointer(&x.Push[0]))
		}
		d.fn.cmdDispatch(c.cmd, x.Groups[0], x.Groups[1], x.Groups[2])
	}
	toHost := &memoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessShaderWrite, dstAccessMask: accessHostRead}
	d.fn.cmdPipelineBarrier(c.cmd, pipelineStageComputeShaderBit, pipelineStageHostBit, 0, 1, toHost, 0, nil, 0, nil)
	if err := check("vkEndCommandBuffer", d.fn.endCommandBuffer(c.cmd)); err != nil {
		return err
	}
	fci := &fenceCreateInfo{sType: stFenceCreateInfo}
	if err := check("vkCreateFence", d.fn.createFence(d.dev, fci, nil, &c.fence)); err != nil {
		return err
	}
	// The submit info holds a Go pointer (to cmd) that the driver reads:
	// pinned until the commands are destroyed.
	c.pin.Pin(&c.cmd)
	c.submit = submitInfo{sType: stSubmitInfo, commandBufferCount: 1, pCommandBuffers: &c.cmd}
	return nil
}

// Run submits the recorded commands to the queue and waits for them to
// finish. Run may be called any number of times; host writes to the
// buffers before it are seen by the shaders, and their writes are visible
// to Buffer.Read after it. Runs of one Commands are serialized; Runs of
// different Commands may overlap.
func (c *Commands) Run() error {
	d := c.d
	d.life.RLock()
	defer d.life.RUnlock()
	if d.closed {
		return ErrClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freed {
		return fmt.Errorf("%w: Commands.Run after Commands.Free", ErrFreed)
	}
	for _, p := range c.pipelines {
		if p.freed.Load() {
			return fmt.Errorf("%w: Commands.Run: a pipeline it uses was freed", ErrFreed)
		}
	}
	for _, b := range c.buffers {
		if b.freed.Load() {
			return fmt.Errorf("%w: Commands.Run: a buffer it uses was freed", ErrFreed)
		}
	}
	d.queueMu.Lock()
	r := call(d.fn.queueSubmit, d.queue, 1, uintptr(unsafe.Pointer(&c.submit)), uintptr(c.fence))
	d.queueMu.Unlock()
	if r != 0 {
		return check("vkQueueSubmit", r)
	}
	for {
		r = call(d.fn.waitForFences, d.dev, 1, uintptr(unsafe.Pointer(&c.fence)), 1, ^uintptr(0))
		if Result(r) != Timeout {
			break
		}
	}
	if r != 0 {
		return check("vkWaitForFences", r)
	}
	if r = call(d.fn.resetFences, d.dev, 1, uintptr(unsafe.Pointer(&c.fence))); r != 0 {
		return check("vkResetFences", r)
	}
	return nil
}

// call calls the C function at fn, which returns a VkResult.
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// Free releases the command buffer, its descriptor sets and fence, and its
// references on pipelines and buffers. It waits for a Run in progress.
// Freeing twice, or after Device.Close, is a no-op.
func (c *Commands) Free() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freed {
		return
	}
	c.freed = true
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.commands, c)
	d.destroyCommands(c)
}

// destroyCommands destroys c's Vulkan objects and drops its references;
// d.mu is held.
func (d *Device) destroyCommands(c *Commands) {
	if c.destroyed || d.gone {
		return
	}
	c.destroyed = true
	c.pin.Unpin()
	if c.fence != 0 {
		d.fn.destroyFence(d.dev, c.fence, nil)
	}
	if c.cmdPool != 0 {
		d.fn.destroyCommandPool(d.dev, c.cmdPool, nil) // frees c.cmd
	}
	if c.descPool != 0 {
		d.fn.destroyDescriptorPool(d.dev, c.descPool, nil) // frees the sets
	}
	d.unref(c)
}
