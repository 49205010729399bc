//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"testing"
	"unsafe"
)

// TestLayout checks the Go structs against the C ones. The numbers were
// measured on linux/amd64 by compiling a small C program with gcc against
// vulkan_core.h (Vulkan-Headers 1.3.239, libvulkan-dev) that printed sizeof
// and offsetof; arm64 (LP64, natural alignment) lays the structs out the
// same way. The test needs no C compiler: it asserts that Go's unsafe.Sizeof
// and unsafe.Offsetof give the measured numbers.
func TestLayout(t *testing.T) {
	var (
		lim   physicalDeviceLimits
		props physicalDeviceProperties
		mp    physicalDeviceMemoryProperties
		v12   physicalDeviceVulkan12Features
	)
	sizes := []struct {
		name      string
		got, want uintptr
	}{
		{"VkApplicationInfo", unsafe.Sizeof(applicationInfo{}), 48},
		{"VkInstanceCreateInfo", unsafe.Sizeof(instanceCreateInfo{}), 64},
		{"VkPhysicalDeviceLimits", unsafe.Sizeof(physicalDeviceLimits{}), 504},
		{"VkPhysicalDeviceProperties", unsafe.Sizeof(physicalDeviceProperties{}), 824},
		{"VkQueueFamilyProperties", unsafe.Sizeof(queueFamilyProperties{}), 24},
		{"VkMemoryType", unsafe.Sizeof(memoryType{}), 8},
		{"VkMemoryHeap", unsafe.Sizeof(memoryHeap{}), 16},
		{"VkPhysicalDeviceMemoryProperties", unsafe.Sizeof(physicalDeviceMemoryProperties{}), 520},
		{"VkPhysicalDeviceFeatures", unsafe.Sizeof(physicalDeviceFeatures{}), 220},
		{"VkPhysicalDeviceFeatures2", unsafe.Sizeof(physicalDeviceFeatures2{}), 240},
		{"VkPhysicalDeviceVulkan11Features", unsafe.Sizeof(physicalDeviceVulkan11Features{}), 64},
		{"VkPhysicalDeviceVulkan12Features", unsafe.Sizeof(physicalDeviceVulkan12Features{}), 208},
		{"VkPhysicalDevice16BitStorageFeatures", unsafe.Sizeof(physicalDevice16BitStorageFeatures{}), 32},
		{"VkPhysicalDevice8BitStorageFeatures", unsafe.Sizeof(physicalDevice8BitStorageFeatures{}), 32},
		{"VkPhysicalDeviceShaderFloat16Int8Features", unsafe.Sizeof(physicalDeviceShaderFloat16Int8Features{}), 24},
		{"VkExtensionProperties", unsafe.Sizeof(extensionProperties{}), 260},
		{"VkDeviceQueueCreateInfo", unsafe.Sizeof(deviceQueueCreateInfo{}), 40},
		{"VkDeviceCreateInfo", unsafe.Sizeof(deviceCreateInfo{}), 72},
		{"VkBufferCreateInfo", unsafe.Sizeof(bufferCreateInfo{}), 56},
		{"VkMemoryRequirements", unsafe.Sizeof(memoryRequirements{}), 24},
		{"VkMemoryAllocateInfo", unsafe.Sizeof(memoryAllocateInfo{}), 32},
		{"VkShaderModuleCreateInfo", unsafe.Sizeof(shaderModuleCreateInfo{}), 40},
		{"VkDescriptorSetLayoutBinding", unsafe.Sizeof(descriptorSetLayoutBinding{}), 24},
		{"VkDescriptorSetLayoutCreateInfo", unsafe.Sizeof(descriptorSetLayoutCreateInfo{}), 32},
		{"VkPipelineLayoutCreateInfo", unsafe.Sizeof(pipelineLayoutCreateInfo{}), 48},
		{"VkPipelineShaderStageCreateInfo", unsafe.Sizeof(pipelineShaderStageCreateInfo{}), 48},
		{"VkComputePipelineCreateInfo", unsafe.Sizeof(computePipelineCreateInfo{}), 96},
		{"VkDescriptorPoolSize", unsafe.Sizeof(descriptorPoolSize{}), 8},
		{"VkDescriptorPoolCreateInfo", unsafe.Sizeof(descriptorPoolCreateInfo{}), 40},
		{"VkDescriptorSetAllocateInfo", unsafe.Sizeof(descriptorSetAllocateInfo{}), 40},
		{"VkDescriptorBufferInfo", unsafe.Sizeof(descriptorBufferInfo{}), 24},
		{"VkWriteDescriptorSet", unsafe.Sizeof(writeDescriptorSet{}), 64},
		{"VkCommandPoolCreateInfo", unsafe.Sizeof(commandPoolCreateInfo{}), 24},
		{"VkCommandBufferAllocateInfo", unsafe.Sizeof(commandBufferAllocateInfo{}), 32},
		{"VkCommandBufferBeginInfo", unsafe.Sizeof(commandBufferBeginInfo{}), 32},
		{"VkMemoryBarrier", unsafe.Sizeof(memoryBarrier{}), 24},
		{"VkFenceCreateInfo", unsafe.Sizeof(fenceCreateInfo{}), 24},
		{"VkSubmitInfo", unsafe.Sizeof(submitInfo{}), 72},
	}
	for _, s := range sizes {
		if s.got != s.want {
			t.Errorf("sizeof(%s) = %d in Go, %d in C", s.name, s.got, s.want)
		}
	}
	offsets := []struct {
		name      string
		got, want uintptr
	}{
		{"VkApplicationInfo.pNext", unsafe.Offsetof(applicationInfo{}.pNext), 8},
		{"VkApplicationInfo.pApplicationName", unsafe.Offsetof(applicationInfo{}.pApplicationName), 16},
		{"VkApplicationInfo.applicationVersion", unsafe.Offsetof(applicationInfo{}.applicationVersion), 24},
		{"VkApplicationInfo.pEngineName", unsafe.Offsetof(applicationInfo{}.pEngineName), 32},
		{"VkApplicationInfo.engineVersion", unsafe.Offsetof(applicationInfo{}.engineVersion), 40},
		{"VkApplicationInfo.apiVersion", unsafe.Offsetof(applicationInfo{}.apiVersion), 44},
		{"VkInstanceCreateInfo.flags", unsafe.Offsetof(instanceCreateInfo{}.flags), 16},
		{"VkInstanceCreateInfo.pApplicationInfo", unsafe.Offsetof(instanceCreateInfo{}.pApplicationInfo), 24},
		{"VkInstanceCreateInfo.enabledLayerCount", unsafe.Offsetof(instanceCreateInfo{}.enabledLayerCount), 32},
		{"VkInstanceCreateInfo.ppEnabledLayerNames", unsafe.Offsetof(instanceCreateInfo{}.ppEnabledLayerNames), 40},
		{"VkInstanceCreateInfo.enabledExtensionCount", unsafe.Offsetof(instanceCreateInfo{}.enabledExtensionCount), 48},
		{"VkInstanceCreateInfo.ppEnabledExtensionNames", unsafe.Offsetof(instanceCreateInfo{}.ppEnabledExtensionNames), 56},
		{"VkPhysicalDeviceLimits.maxStorageBufferRange", unsafe.Offsetof(lim.maxStorageBufferRange), 28},
		{"VkPhysicalDeviceLimits.maxMemoryAllocationCount", unsafe.Offsetof(lim.maxMemoryAllocationCount), 36},
		{"VkPhysicalDeviceLimits.bufferImageGranularity", unsafe.Offsetof(lim.bufferImageGranularity), 48},
		{"VkPhysicalDeviceLimits.sparseAddressSpaceSize", unsafe.Offsetof(lim.sparseAddressSpaceSize), 56},
		{"VkPhysicalDeviceLimits.maxBoundDescriptorSets", unsafe.Offsetof(lim.maxBoundDescriptorSets), 64},
		{"VkPhysicalDeviceLimits.maxPerStageDescriptorStorageBuffers", unsafe.Offsetof(lim.maxPerStageDescriptorStorageBuffers), 76},
		{"VkPhysicalDeviceLimits.maxComputeSharedMemorySize", unsafe.Offsetof(lim.maxComputeSharedMemorySize), 216},
		{"VkPhysicalDeviceLimits.maxComputeWorkGroupCount", unsafe.Offsetof(lim.maxComputeWorkGroupCount), 220},
		{"VkPhysicalDeviceLimits.maxComputeWorkGroupInvocations", unsafe.Offsetof(lim.maxComputeWorkGroupInvocations), 232},
		{"VkPhysicalDeviceLimits.maxComputeWorkGroupSize", unsafe.Offsetof(lim.maxComputeWorkGroupSize), 236},
		{"VkPhysicalDeviceLimits.minMemoryMapAlignment", unsafe.Offsetof(lim.minMemoryMapAlignment), 304},
		{"VkPhysicalDeviceLimits.minTexelBufferOffsetAlignment", unsafe.Offsetof(lim.minTexelBufferOffsetAlignment), 312},
		{"VkPhysicalDeviceLimits.minStorageBufferOffsetAlignment", unsafe.Offsetof(lim.minStorageBufferOffsetAlignment), 328},
		{"VkPhysicalDeviceLimits.timestampPeriod", unsafe.Offsetof(lim.timestampPeriod), 424},
		{"VkPhysicalDeviceLimits.pointSizeRange", unsafe.Offsetof(lim.pointSizeRange), 444},
		{"VkPhysicalDeviceLimits.optimalBufferCopyOffsetAlignment", unsafe.Offsetof(lim.optimalBufferCopyOffsetAlignment), 480},
		{"VkPhysicalDeviceLimits.nonCoherentAtomSize", unsafe.Offsetof(lim.nonCoherentAtomSize), 496},
		{"VkPhysicalDeviceProperties.deviceType", unsafe.Offsetof(props.deviceType), 16},
		{"VkPhysicalDeviceProperties.deviceName", unsafe.Offsetof(props.deviceName), 20},
		{"VkPhysicalDeviceProperties.pipelineCacheUUID", unsafe.Offsetof(props.pipelineCacheUUID), 276},
		{"VkPhysicalDeviceProperties.limits", unsafe.Offsetof(props.limits), 296},
		{"VkPhysicalDeviceProperties.sparseProperties", unsafe.Offsetof(props.sparseProperties), 800},
		{"VkQueueFamilyProperties.minImageTransferGranularity", unsafe.Offsetof(queueFamilyProperties{}.minImageTransferGranularity), 12},
		{"VkPhysicalDeviceMemoryProperties.memoryHeapCount", unsafe.Offsetof(mp.memoryHeapCount), 260},
		{"VkPhysicalDeviceMemoryProperties.memoryHeaps", unsafe.Offsetof(mp.memoryHeaps), 264},
		{"VkPhysicalDeviceFeatures.shaderFloat64", unsafe.Sizeof(uint32(0)) * pdfShaderFloat64, 156},
		{"VkPhysicalDeviceFeatures.shaderInt64", unsafe.Sizeof(uint32(0)) * pdfShaderInt64, 160},
		{"VkPhysicalDeviceFeatures.shaderInt16", unsafe.Sizeof(uint32(0)) * pdfShaderInt16, 164},
		{"VkPhysicalDeviceFeatures.inheritedQueries", unsafe.Sizeof(uint32(0)) * 54, 216},
		{"VkPhysicalDeviceFeatures2.features", unsafe.Offsetof(physicalDeviceFeatures2{}.features), 16},
		{"VkPhysicalDeviceVulkan11Features.storageBuffer16BitAccess", unsafe.Offsetof(physicalDeviceVulkan11Features{}.storageBuffer16BitAccess), 16},
		{"VkPhysicalDeviceVulkan11Features.uniformAndStorageBuffer16BitAccess", unsafe.Offsetof(physicalDeviceVulkan11Features{}.uniformAndStorageBuffer16BitAccess), 20},
		{"VkPhysicalDeviceVulkan11Features.shaderDrawParameters", unsafe.Offsetof(physicalDeviceVulkan11Features{}.shaderDrawParameters), 60},
		{"VkPhysicalDeviceVulkan12Features.storageBuffer8BitAccess", unsafe.Offsetof(v12.b) + 4*v12StorageBuffer8BitAccess, 24},
		{"VkPhysicalDeviceVulkan12Features.uniformAndStorageBuffer8BitAccess", unsafe.Offsetof(v12.b) + 4*v12UniformAndStorageBuffer8BitAccess, 28},
		{"VkPhysicalDeviceVulkan12Features.shaderFloat16", unsafe.Offsetof(v12.b) + 4*v12ShaderFloat16, 44},
		{"VkPhysicalDeviceVulkan12Features.shaderInt8", unsafe.Offsetof(v12.b) + 4*v12ShaderInt8, 48},
		{"VkPhysicalDeviceVulkan12Features.subgroupBroadcastDynamicId", unsafe.Offsetof(v12.b) + 4*46, 200},
		{"VkPhysicalDevice16BitStorageFeatures.storageBuffer16BitAccess", unsafe.Offsetof(physicalDevice16BitStorageFeatures{}.storageBuffer16BitAccess), 16},
		{"VkPhysicalDevice16BitStorageFeatures.uniformAndStorageBuffer16BitAccess", unsafe.Offsetof(physicalDevice16BitStorageFeatures{}.uniformAndStorageBuffer16BitAccess), 20},
		{"VkPhysicalDevice8BitStorageFeatures.storageBuffer8BitAccess", unsafe.Offsetof(physicalDevice8BitStorageFeatures{}.storageBuffer8BitAccess), 16},
		{"VkPhysicalDevice8BitStorageFeatures.uniformAndStorageBuffer8BitAccess", unsafe.Offsetof(physicalDevice8BitStorageFeatures{}.uniformAndStorageBuffer8BitAccess), 20},
		{"VkPhysicalDeviceShaderFloat16Int8Features.shaderFloat16", unsafe.Offsetof(physicalDeviceShaderFloat16Int8Features{}.shaderFloat16), 16},
		{"VkPhysicalDeviceShaderFloat16Int8Features.shaderInt8", unsafe.Offsetof(physicalDeviceShaderFloat16Int8Features{}.shaderInt8), 20},
		{"VkExtensionProperties.specVersion", unsafe.Offsetof(extensionProperties{}.specVersion), 256},
		{"VkDeviceQueueCreateInfo.flags", unsafe.Offsetof(deviceQueueCreateInfo{}.flags), 16},
		{"VkDeviceQueueCreateInfo.queueFamilyIndex", unsafe.Offsetof(deviceQueueCreateInfo{}.queueFamilyIndex), 20},
		{"VkDeviceQueueCreateInfo.queueCount", unsafe.Offsetof(deviceQueueCreateInfo{}.queueCount), 24},
		{"VkDeviceQueueCreateInfo.pQueuePriorities", unsafe.Offsetof(deviceQueueCreateInfo{}.pQueuePriorities), 32},
		{"VkDeviceCreateInfo.queueCreateInfoCount", unsafe.Offsetof(deviceCreateInfo{}.queueCreateInfoCount), 20},
		{"VkDeviceCreateInfo.pQueueCreateInfos", unsafe.Offsetof(deviceCreateInfo{}.pQueueCreateInfos), 24},
		{"VkDeviceCreateInfo.enabledLayerCount", unsafe.Offsetof(deviceCreateInfo{}.enabledLayerCount), 32},
		{"VkDeviceCreateInfo.ppEnabledLayerNames", unsafe.Offsetof(deviceCreateInfo{}.ppEnabledLayerNames), 40},
		{"VkDeviceCreateInfo.enabledExtensionCount", unsafe.Offsetof(deviceCreateInfo{}.enabledExtensionCount), 48},
		{"VkDeviceCreateInfo.ppEnabledExtensionNames", unsafe.Offsetof(deviceCreateInfo{}.ppEnabledExtensionNames), 56},
		{"VkDeviceCreateInfo.pEnabledFeatures", unsafe.Offsetof(deviceCreateInfo{}.pEnabledFeatures), 64},
		{"VkBufferCreateInfo.flags", unsafe.Offsetof(bufferCreateInfo{}.flags), 16},
		{"VkBufferCreateInfo.size", unsafe.Offsetof(bufferCreateInfo{}.size), 24},
		{"VkBufferCreateInfo.usage", unsafe.Offsetof(bufferCreateInfo{}.usage), 32},
		{"VkBufferCreateInfo.sharingMode", unsafe.Offsetof(bufferCreateInfo{}.sharingMode), 36},
		{"VkBufferCreateInfo.queueFamilyIndexCount", unsafe.Offsetof(bufferCreateInfo{}.queueFamilyIndexCount), 40},
		{"VkBufferCreateInfo.pQueueFamilyIndices", unsafe.Offsetof(bufferCreateInfo{}.pQueueFamilyIndices), 48},
		{"VkMemoryRequirements.alignment", unsafe.Offsetof(memoryRequirements{}.alignment), 8},
		{"VkMemoryRequirements.memoryTypeBits", unsafe.Offsetof(memoryRequirements{}.memoryTypeBits), 16},
		{"VkMemoryAllocateInfo.allocationSize", unsafe.Offsetof(memoryAllocateInfo{}.allocationSize), 16},
		{"VkMemoryAllocateInfo.memoryTypeIndex", unsafe.Offsetof(memoryAllocateInfo{}.memoryTypeIndex), 24},
		{"VkShaderModuleCreateInfo.flags", unsafe.Offsetof(shaderModuleCreateInfo{}.flags), 16},
		{"VkShaderModuleCreateInfo.codeSize", unsafe.Offsetof(shaderModuleCreateInfo{}.codeSize), 24},
		{"VkShaderModuleCreateInfo.pCode", unsafe.Offsetof(shaderModuleCreateInfo{}.pCode), 32},
		{"VkDescriptorSetLayoutBinding.descriptorType", unsafe.Offsetof(descriptorSetLayoutBinding{}.descriptorType), 4},
		{"VkDescriptorSetLayoutBinding.descriptorCount", unsafe.Offsetof(descriptorSetLayoutBinding{}.descriptorCount), 8},
		{"VkDescriptorSetLayoutBinding.stageFlags", unsafe.Offsetof(descriptorSetLayoutBinding{}.stageFlags), 12},
		{"VkDescriptorSetLayoutBinding.pImmutableSamplers", unsafe.Offsetof(descriptorSetLayoutBinding{}.pImmutableSamplers), 16},
		{"VkDescriptorSetLayoutCreateInfo.flags", unsafe.Offsetof(descriptorSetLayoutCreateInfo{}.flags), 16},
		{"VkDescriptorSetLayoutCreateInfo.bindingCount", unsafe.Offsetof(descriptorSetLayoutCreateInfo{}.bindingCount), 20},
		{"VkDescriptorSetLayoutCreateInfo.pBindings", unsafe.Offsetof(descriptorSetLayoutCreateInfo{}.pBindings), 24},
		{"VkPushConstantRange.offset", unsafe.Offsetof(pushConstantRange{}.offset), 4},
		{"VkPushConstantRange.size", unsafe.Offsetof(pushConstantRange{}.size), 8},
		{"VkPipelineLayoutCreateInfo.setLayoutCount", unsafe.Offsetof(pipelineLayoutCreateInfo{}.setLayoutCount), 20},
		{"VkPipelineLayoutCreateInfo.pSetLayouts", unsafe.Offsetof(pipelineLayoutCreateInfo{}.pSetLayouts), 24},
		{"VkPipelineLayoutCreateInfo.pushConstantRangeCount", unsafe.Offsetof(pipelineLayoutCreateInfo{}.pushConstantRangeCount), 32},
		{"VkPipelineLayoutCreateInfo.pPushConstantRanges", unsafe.Offsetof(pipelineLayoutCreateInfo{}.pPushConstantRanges), 40},
		{"VkPipelineShaderStageCreateInfo.flags", unsafe.Offsetof(pipelineShaderStageCreateInfo{}.flags), 16},
		{"VkPipelineShaderStageCreateInfo.stage", unsafe.Offsetof(pipelineShaderStageCreateInfo{}.stage), 20},
		{"VkPipelineShaderStageCreateInfo.module", unsafe.Offsetof(pipelineShaderStageCreateInfo{}.module), 24},
		{"VkPipelineShaderStageCreateInfo.pName", unsafe.Offsetof(pipelineShaderStageCreateInfo{}.pName), 32},
		{"VkPipelineShaderStageCreateInfo.pSpecializationInfo", unsafe.Offsetof(pipelineShaderStageCreateInfo{}.pSpecializationInfo), 40},
		{"VkComputePipelineCreateInfo.flags", unsafe.Offsetof(computePipelineCreateInfo{}.flags), 16},
		{"VkComputePipelineCreateInfo.stage", unsafe.Offsetof(computePipelineCreateInfo{}.stage), 24},
		{"VkComputePipelineCreateInfo.layout", unsafe.Offsetof(computePipelineCreateInfo{}.layout), 72},
		{"VkComputePipelineCreateInfo.basePipelineHandle", unsafe.Offsetof(computePipelineCreateInfo{}.basePipelineHandle), 80},
		{"VkComputePipelineCreateInfo.basePipelineIndex", unsafe.Offsetof(computePipelineCreateInfo{}.basePipelineIndex), 88},
		{"VkDescriptorPoolCreateInfo.flags", unsafe.Offsetof(descriptorPoolCreateInfo{}.flags), 16},
		{"VkDescriptorPoolCreateInfo.maxSets", unsafe.Offsetof(descriptorPoolCreateInfo{}.maxSets), 20},
		{"VkDescriptorPoolCreateInfo.poolSizeCount", unsafe.Offsetof(descriptorPoolCreateInfo{}.poolSizeCount), 24},
		{"VkDescriptorPoolCreateInfo.pPoolSizes", unsafe.Offsetof(descriptorPoolCreateInfo{}.pPoolSizes), 32},
		{"VkDescriptorSetAllocateInfo.descriptorPool", unsafe.Offsetof(descriptorSetAllocateInfo{}.descriptorPool), 16},
		{"VkDescriptorSetAllocateInfo.descriptorSetCount", unsafe.Offsetof(descriptorSetAllocateInfo{}.descriptorSetCount), 24},
		{"VkDescriptorSetAllocateInfo.pSetLayouts", unsafe.Offsetof(descriptorSetAllocateInfo{}.pSetLayouts), 32},
		{"VkDescriptorBufferInfo.offset", unsafe.Offsetof(descriptorBufferInfo{}.offset), 8},
		{"VkDescriptorBufferInfo.range", unsafe.Offsetof(descriptorBufferInfo{}.rng), 16},
		{"VkWriteDescriptorSet.dstSet", unsafe.Offsetof(writeDescriptorSet{}.dstSet), 16},
		{"VkWriteDescriptorSet.dstBinding", unsafe.Offsetof(writeDescriptorSet{}.dstBinding), 24},
		{"VkWriteDescriptorSet.dstArrayElement", unsafe.Offsetof(writeDescriptorSet{}.dstArrayElement), 28},
		{"VkWriteDescriptorSet.descriptorCount", unsafe.Offsetof(writeDescriptorSet{}.descriptorCount), 32},
		{"VkWriteDescriptorSet.descriptorType", unsafe.Offsetof(writeDescriptorSet{}.descriptorType), 36},
		{"VkWriteDescriptorSet.pImageInfo", unsafe.Offsetof(writeDescriptorSet{}.pImageInfo), 40},
		{"VkWriteDescriptorSet.pBufferInfo", unsafe.Offsetof(writeDescriptorSet{}.pBufferInfo), 48},
		{"VkWriteDescriptorSet.pTexelBufferView", unsafe.Offsetof(writeDescriptorSet{}.pTexelBufferView), 56},
		{"VkCommandPoolCreateInfo.flags", unsafe.Offsetof(commandPoolCreateInfo{}.flags), 16},
		{"VkCommandPoolCreateInfo.queueFamilyIndex", unsafe.Offsetof(commandPoolCreateInfo{}.queueFamilyIndex), 20},
		{"VkCommandBufferAllocateInfo.commandPool", unsafe.Offsetof(commandBufferAllocateInfo{}.commandPool), 16},
		{"VkCommandBufferAllocateInfo.level", unsafe.Offsetof(commandBufferAllocateInfo{}.level), 24},
		{"VkCommandBufferAllocateInfo.commandBufferCount", unsafe.Offsetof(commandBufferAllocateInfo{}.commandBufferCount), 28},
		{"VkCommandBufferBeginInfo.flags", unsafe.Offsetof(commandBufferBeginInfo{}.flags), 16},
		{"VkCommandBufferBeginInfo.pInheritanceInfo", unsafe.Offsetof(commandBufferBeginInfo{}.pInheritanceInfo), 24},
		{"VkMemoryBarrier.srcAccessMask", unsafe.Offsetof(memoryBarrier{}.srcAccessMask), 16},
		{"VkMemoryBarrier.dstAccessMask", unsafe.Offsetof(memoryBarrier{}.dstAccessMask), 20},
		{"VkFenceCreateInfo.flags", unsafe.Offsetof(fenceCreateInfo{}.flags), 16},
		{"VkSubmitInfo.waitSemaphoreCount", unsafe.Offsetof(submitInfo{}.waitSemaphoreCount), 16},
		{"VkSubmitInfo.pWaitSemaphores", unsafe.Offsetof(submitInfo{}.pWaitSemaphores), 24},
		{"VkSubmitInfo.pWaitDstStageMask", unsafe.Offsetof(submitInfo{}.pWaitDstStageMask), 32},
		{"VkSubmitInfo.commandBufferCount", unsafe.Offsetof(submitInfo{}.commandBufferCount), 40},
		{"VkSubmitInfo.pCommandBuffers", unsafe.Offsetof(submitInfo{}.pCommandBuffers), 48},
		{"VkSubmitInfo.signalSemaphoreCount", unsafe.Offsetof(submitInfo{}.signalSemaphoreCount), 56},
		{"VkSubmitInfo.pSignalSemaphores", unsafe.Offsetof(submitInfo{}.pSignalSemaphores), 64},
	}
	for _, o := range offsets {
		if o.got != o.want {
			t.Errorf("offsetof(%s) = %d in Go, %d in C", o.name, o.got, o.want)
		}
	}
}
