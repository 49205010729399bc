//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Pipeline is a compute pipeline and its layout: descriptor set 0 with
// bindings 0..n-1, each one storage buffer, and push constants 0..m-1
// (none where m is 0).
type Pipeline struct {
	d           *Device
	numBindings int
	pushBytes   int
	setLayout   uint64 // VkDescriptorSetLayout
	layout      uint64 // VkPipelineLayout
	pipeline    uint64 // VkPipeline

	freed     atomic.Bool
	refs      int  // guarded by d.mu
	destroyed bool // guarded by d.mu
}

// NewPipeline makes a compute pipeline from a SPIR-V module, its GLCompute
// entry point entry (usually "main"), with numBindings storage-buffer
// bindings in descriptor set 0 and pushBytes bytes of push constants (a
// multiple of 4, at most Limits.MaxPushConstantsSize; 0 for none), which
// each Dispatch supplies. The module is checked first (see checkSPIRV):
// drivers do not validate SPIR-V and may crash on a bad one.
func (d *Device) NewPipeline(spirv []byte, entry string, numBindings, pushBytes int) (*Pipeline, error) {
	if numBindings < 0 || numBindings > int(d.limits.MaxPerStageDescriptorStorageBuffers) {
		return nil, fmt.Errorf("vulkan: NewPipeline: %d bindings; the device allows 0 to %d", numBindings, d.limits.MaxPerStageDescriptorStorageBuffers)
	}
	if pushBytes < 0 || pushBytes%4 != 0 || pushBytes > int(d.limits.MaxPushConstantsSize) {
		return nil, fmt.Errorf("vulkan: NewPipeline: %d bytes of push constants; %s allows a multiple of 4 up to %d", pushBytes, d.name, d.limits.MaxPushConstantsSize)
	}
	words, err := checkSPIRV(spirv, entry, numBindings, pushBytes)
	if err != nil {
		return nil, err
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	var pin runtime.Pinner
	defer pin.Unpin()

	p := &Pipeline{d: d, numBindings: numBindings, pushBytes: pushBytes}
	ok := false
	defer func() {
		if !ok {
			d.destroyPipelineObjects(p)
		}
	}()

	pin.Pin(&words[0])
	smi := &shaderModuleCreateInfo{sType: stShaderModuleCreateInfo, codeSize: uint64(4 * len(words)), pCode: &words[0]}
	var module uint64
	if err := check("vkCreateShaderModule", d.fn.createShaderModule(d.dev, smi, nil, &module)); err != nil {
		return nil, err
	}
	defer d.fn.destroyShaderModule(d.dev, module, nil)

	dsl := &descriptorSetLayoutCreateInfo{sType: stDescriptorSetLayoutCreateInfo, bindingCount: uint32(numBindings)}
	if numBindings > 0 {
		bindings := make([]descriptorSetLayoutBinding, numBindings)
		for i := range bindings {
			bindings[i] = descriptorSetLayoutBinding{
				binding:         uint32(i),
				descriptorType:  descriptorTypeStorageBuffer,
				descriptorCount: 1,
				stageFlags:      shaderStageCompute,
			}
		}
		pin.Pin(&bindings[0])
		dsl.pBindings = &bindings[0]
	}
	if err := check("vkCreateDescriptorSetLayout", d.fn.createDescriptorSetLayout(d.dev, dsl, nil, &p.setLayout)); err != nil {
		return nil, err
	}

	setLayout := new(uint64)
	*setLayout = p.setLayout
	pin.Pin(setLayout)
	pli := &pipelineLayoutCreateInfo{sType: stPipelineLayoutCreateInfo, setLayoutCount: 1, pSetLayouts: setLayout}
	if pushBytes > 0 {
		rng := &pushConstantRange{stageFlags: shaderStageCompute, size: uint32(pushBytes)}
		pin.Pin(rng)
		pli.pushConstantRangeCount, pli.pPushConstantRanges = 1, unsafe.Pointer(rng)
	}
	if err := check("vkCreatePipelineLayout", d.fn.createPipelineLayout(d.dev, pli, nil, &p.layout)); err != nil {
		return nil, err
	}

	name := cString(entry)
	pin.Pin(&name[0])
	cpi := &computePipelineCreateInfo{
		sType: stComputePipelineCreateInfo,
		stage: pipelineShaderStageCreateInfo{
			sType:  stPipelineShaderStageCreateInfo,
			stage:  shaderStageCompute,
			module: module,
			pName:  &name[0],
		},
		layout:            p.layout,
		basePipelineIndex: -1,
	}
	if err := check("vkCreateComputePipelines", d.fn.createComputePipelines(d.dev, 0, 1, cpi, nil, &p.pipeline)); err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.pipelines[p] = struct{}{}
	d.mu.Unlock()
	ok = true
	return p, nil
}

// Free releases the pipeline; like Buffer.Free, the Vulkan objects outlive
// it while Commands use them. Freeing twice, or after Device.Close, is a
// no-op.
func (p *Pipeline) Free() {
	if p == nil || p.freed.Swap(true) {
		return
	}
	d := p.d
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pipelines, p)
	if p.refs == 0 {
		d.destroyPipeline(p)
	}
}

// destroyPipeline destroys p's Vulkan objects; d.mu is held.
func (d *Device) destroyPipeline(p *Pipeline) {
	if p.destroyed || d.gone {
		return
	}
	p.destroyed = true
	d.destroyPipelineObjects(p)
}

func (d *Device) destroyPipelineObjects(p *Pipeline) {
	if p.pipeline != 0 {
		d.fn.destroyPipeline(d.dev, p.pipeline, nil)
	}
	if p.layout != 0 {
		d.fn.destroyPipelineLayout(d.dev, p.layout, nil)
	}
	if p.setLayout != 0 {
		d.fn.destroyDescriptorSetLayout(d.dev, p.setLayout, nil)
	}
}
