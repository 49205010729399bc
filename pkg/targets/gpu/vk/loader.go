//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// library is the Vulkan loader, opened once per process and never closed
// (unloading a driver that started threads is asking for trouble). It holds
// the global-level entry points; instance and device functions live in the
// Device that loaded them.
type library struct {
	getInstanceProcAddr      func(instance uintptr, name string) uintptr
	enumerateInstanceVersion func(version *uint32) int32 // nil on a 1.0 loader
	createInstance           func(info *instanceCreateInfo, alloc unsafe.Pointer, instance *uintptr) int32
}

var (
	libOnce sync.Once
	lib     *library
	libErr  error
)

// loadLibrary opens libvulkan.so.1 (or libvulkan.so) and resolves the
// global entry points.
func loadLibrary() (*library, error) {
	libOnce.Do(func() {
		var h uintptr
		var err error
		for _, name := range []string{"libvulkan.so.1", "libvulkan.so"} {
			if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
				break
			}
		}
		if h == 0 {
			libErr = ErrNoLoader
			return
		}
		gipa, err := purego.Dlsym(h, "vkGetInstanceProcAddr")
		if err != nil || gipa == 0 {
			libErr = fmt.Errorf("%w: it has no vkGetInstanceProcAddr", ErrNoLoader)
			return
		}
		l := &library{}
		purego.RegisterFunc(&l.getInstanceProcAddr, gipa)
		if p := l.getInstanceProcAddr(0, "vkEnumerateInstanceVersion"); p != 0 {
			purego.RegisterFunc(&l.enumerateInstanceVersion, p)
		}
		p := l.getInstanceProcAddr(0, "vkCreateInstance")
		if p == 0 {
			libErr = fmt.Errorf("%w: it has no vkCreateInstance", ErrNoLoader)
			return
		}
		purego.RegisterFunc(&l.createInstance, p)
		lib = l
	})
	return lib, libErr
}

// instanceFns are the instance-level functions Open uses.
type instanceFns struct {
	destroyInstance                        func(instance uintptr, alloc unsafe.Pointer)
	enumeratePhysicalDevices               func(instance uintptr, count *uint32, devices *uintptr) int32
	getPhysicalDeviceProperties            func(pd uintptr, props *physicalDeviceProperties)
	getPhysicalDeviceQueueFamilyProperties func(pd uintptr, count *uint32, props *queueFamilyProperties)
	getPhysicalDeviceMemoryProperties      func(pd uintptr, props *physicalDeviceMemoryProperties)
	getPhysicalDeviceFeatures              func(pd uintptr, features *physicalDeviceFeatures)
	getPhysicalDeviceFeatures2             func(pd uintptr, features *physicalDeviceFeatures2)
	enumerateDeviceExtensionProperties     func(pd uintptr, layer *byte, count *uint32, props *extensionProperties) int32
	createDevice                           func(pd uintptr, info *deviceCreateInfo, alloc unsafe.Pointer, device *uintptr) int32
	getDeviceProcAddr                      func(device uintptr, name string) uintptr
}

func (f *instanceFns) table() []fnEntry {
	return []fnEntry{
		{"vkDestroyInstance", &f.destroyInstance, false},
		{"vkEnumeratePhysicalDevices", &f.enumeratePhysicalDevices, false},
		{"vkGetPhysicalDeviceProperties", &f.getPhysicalDeviceProperties, false},
		{"vkGetPhysicalDeviceQueueFamilyProperties", &f.getPhysicalDeviceQueueFamilyProperties, false},
		{"vkGetPhysicalDeviceMemoryProperties", &f.getPhysicalDeviceMemoryProperties, false},
		{"vkGetPhysicalDeviceFeatures", &f.getPhysicalDeviceFeatures, false},
		{"vkGetPhysicalDeviceFeatures2", &f.getPhysicalDeviceFeatures2, true},
		{"vkEnumerateDeviceExtensionProperties", &f.enumerateDeviceExtensionProperties, false},
		{"vkCreateDevice", &f.createDevice, false},
		{"vkGetDeviceProcAddr", &f.getDeviceProcAddr, false},
	}
}

// deviceFns are the device-level functions, resolved with
// vkGetDeviceProcAddr so calls skip the loader's dispatch trampoline.
type deviceFns struct {
	destroyDevice  func(dev uintptr, alloc unsafe.Pointer)
	getDeviceQueue func(dev uintptr, family, index uint32, queue *uintptr)
	deviceWaitIdle func(dev uintptr) int32
	// The three calls of every run are bound as bare addresses, called
	// with purego.SyscallN: a RegisterFunc call allocates its arguments.
	queueSubmit                 uintptr // (VkQueue queue, uint32_t count, const VkSubmitInfo* submits, VkFence fence)
	createBuffer                func(dev uintptr, info *bufferCreateInfo, alloc unsafe.Pointer, buf *uint64) int32
	destroyBuffer               func(dev uintptr, buf uint64, alloc unsafe.Pointer)
	getBufferMemoryRequirements func(dev uintptr, buf uint64, req *memoryRequirements)
	allocateMemory              func(dev uintptr, info *memoryAllocateInfo, alloc unsafe.Pointer, mem *uint64) int32
	freeMemory                  func(dev uintptr, mem uint64, alloc unsafe.Pointer)
	bindBufferMemory            func(dev uintptr, buf, mem, offset uint64) int32
	mapMemory                   func(dev uintptr, mem, offset, size uint64, flags uint32, data *unsafe.Pointer) int32
	unmapMemory                 func(dev uintptr, mem uint64)
	createShaderModule          func(dev uintptr, info *shaderModuleCreateInfo, alloc unsafe.Pointer, module *uint64) int32
	destroyShaderModule         func(dev uintptr, module uint64, alloc unsafe.Pointer)
	createDescriptorSetLayout   func(dev uintptr, info *descriptorSetLayoutCreateInfo, alloc unsafe.Pointer, layout *uint64) int32
	destroyDescriptorSetLayout  func(dev uintptr, layout uint64, alloc unsafe.Pointer)
	createPipelineLayout        func(dev uintptr, info *pipelineLayoutCreateInfo, alloc unsafe.Pointer, layout *uint64) int32
	destroyPipelineLayout       func(dev uintptr, layout uint64, alloc unsafe.Pointer)
	createComputePipelines      func(dev uintptr, cache uint64, count uint32, infos *computePipelineCreateInfo, alloc unsafe.Pointer, pipelines *uint64) int32
	destroyPipeline             func(dev uintptr, pipeline uint64, alloc unsafe.Pointer)
	createDescriptorPool        func(dev uintptr, info *descriptorPoolCreateInfo, alloc unsafe.Pointer, pool *uint64) int32
	destroyDescriptorPool       func(dev uintptr, pool uint64, alloc unsafe.Pointer)
	allocateDescriptorSets      func(dev uintptr, info *descriptorSetAllocateInfo, sets *uint64) int32
	updateDescriptorSets        func(dev uintptr, writeCount uint32, writes *writeDescriptorSet, copyCount uint32, copies unsafe.Pointer)
	createCommandPool           func(dev uintptr, info *commandPoolCreateInfo, alloc unsafe.Pointer, pool *uint64) int32
	destroyCommandPool          func(dev uintptr, pool uint64, alloc unsafe.Pointer)
	allocateCommandBuffers      func(dev uintptr, info *commandBufferAllocateInfo, cmds *uintptr) int32
	beginCommandBuffer          func(cmd uintptr, info *commandBufferBeginInfo) int32
	endCommandBuffer            func(cmd uintptr) int32
	cmdBindPipeline             func(cmd uintptr, bindPoint uint32, pipeline uint64)
	cmdBindDescriptorSets       func(cmd uintptr, bindPoint uint32, layout uint64, firstSet, setCount uint32, sets *uint64, dynamicOffsetCount uint32, dynamicOffsets unsafe.Pointer)
	cmdDispatch                 func(cmd uintptr, x, y, z uint32)
	cmdPushConstants            func(cmd uintptr, layout uint64, stageFlags, offset, size uint32, values unsafe.Pointer)
	cmdPipelineBarrier          func(cmd uintptr, srcStage, dstStage, dependencyFlags, memoryBarrierCount uint32, memoryBarriers *memoryBarrier, bufferBarrierCount uint32, bufferBarriers unsafe.Pointer, imageBarrierCount uint32, imageBarriers unsafe.Pointer)
	createFence                 func(dev uintptr, info *fenceCreateInfo, alloc unsafe.Pointer, fence *uint64) int32
	destroyFence                func(dev uintptr, fence uint64, alloc unsafe.Pointer)
	resetFences                 uintptr // (VkDevice device, uint32_t count, const VkFence* fences)
	waitForFences               uintptr // (VkDevice device, uint32_t count, const VkFence* fences, VkBool32 waitAll, uint64_t timeout)
}

func (f *deviceFns) table() []fnEntry {
	return []fnEntry{
		{"vkDestroyDevice", &f.destroyDevice, false},
		{"vkGetDeviceQueue", &f.getDeviceQueue, false},
		{"vkDeviceWaitIdle", &f.deviceWaitIdle, false},
		{"vkQueueSubmit", &f.queueSubmit, false},
		{"vkCreateBuffer", &f.createBuffer, false},
		{"vkDestroyBuffer", &f.destroyBuffer, false},
		{"vkGetBufferMemoryRequirements", &f.getBufferMemoryRequirements, false},
		{"vkAllocateMemory", &f.allocateMemory, false},
		{"vkFreeMemory", &f.freeMemory, false},
		{"vkBindBufferMemory", &f.bindBufferMemory, false},
		{"vkMapMemory", &f.mapMemory, false},
		{"vkUnmapMemory", &f.unmapMemory, false},
		{"vkCreateShaderModule", &f.createShaderModule, false},
		{"vkDestroyShaderModule", &f.destroyShaderModule, false},
		{"vkCreateDescriptorSetLayout", &f.createDescriptorSetLayout, false},
		{"vkDestroyDescriptorSetLayout", &f.destroyDescriptorSetLayout, false},
		{"vkCreatePipelineLayout", &f.createPipelineLayout, false},
		{"vkDestroyPipelineLayout", &f.destroyPipelineLayout, false},
		{"vkCreateComputePipelines", &f.createComputePipelines, false},
		{"vkDestroyPipeline", &f.destroyPipeline, false},
		{"vkCreateDescriptorPool", &f.createDescriptorPool, false},
		{"vkDestroyDescriptorPool", &f.destroyDescriptorPool, false},
		{"vkAllocateDescriptorSets", &f.allocateDescriptorSets, false},
		{"vkUpdateDescriptorSets", &f.updateDescriptorSets, false},
		{"vkCreateCommandPool", &f.createCommandPool, false},
		{"vkDestroyCommandPool", &f.destroyCommandPool, false},
		{"vkAllocateCommandBuffers", &f.allocateCommandBuffers, false},
		{"vkBeginCommandBuffer", &f.beginCommandBuffer, false},
		{"vkEndCommandBuffer", &f.endCommandBuffer, false},
		{"vkCmdBindPipeline", &f.cmdBindPipeline, false},
		{"vkCmdBindDescriptorSets", &f.cmdBindDescriptorSets, false},
		{"vkCmdDispatch", &f.cmdDispatch, false},
		{"vkCmdPushConstants", &f.cmdPushConstants, false},
		{"vkCmdPipelineBarrier", &f.cmdPipelineBarrier, false},
		{"vkCreateFence", &f.createFence, false},
		{"vkDestroyFence", &f.destroyFence, false},
		{"vkResetFences", &f.resetFences, false},
		{"vkWaitForFences", &f.waitForFences, false},
	}
}

// fnEntry names a C function and the Go func variable it is bound to,
// or the uintptr that holds its address.
type fnEntry struct {
	name     string
	fptr     any // pointer to a func variable, or a *uintptr
	optional bool
}

// bind resolves each entry with proc and binds it with purego.RegisterFunc.
// A missing optional function leaves its variable nil.
func bind(entries []fnEntry, proc func(name string) uintptr) error {
	for _, e := range entries {
		p := proc(e.name)
		if p == 0 {
			if e.optional {
				continue
			}
			return fmt.Errorf("vulkan: the loader has no %s", e.name)
		}
		if addr, ok := e.fptr.(*uintptr); ok {
			*addr = p
			continue
		}
		purego.RegisterFunc(e.fptr, p)
	}
	return nil
}
