//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import "unsafe"

// The structs keep every field of their C counterparts, for the layout;
// many are never set from Go.
//
//lint:file-ignore U1000 fields exist for the C layout

// The Vulkan structs this package passes to the driver, field for field in
// the order of vulkan_core.h, with the padding the C compiler inserts on
// LP64 (amd64, arm64) spelled out as blank fields. Go lays out a struct the
// way C does there (natural alignment, size rounded up to the alignment), so
// the blank fields change nothing; they are there so that reading a struct
// against the header shows where the holes are. layout_test.go checks every
// size and the offsets that matter against numbers measured with gcc.
//
// Handles: dispatchable ones (VkInstance, VkPhysicalDevice, VkDevice,
// VkQueue, VkCommandBuffer) are pointers and are held as uintptr; the others
// (VkBuffer, VkPipeline, ...) are uint64 on every platform.
//
// Fields that C reads as pointers are unsafe.Pointer (or a typed Go
// pointer), never uintptr, so the garbage collector sees what they point
// at; the callers pin that memory with a runtime.Pinner for the call.

// API versions (VK_MAKE_API_VERSION(0, major, minor, 0)).
const (
	apiVersion10 = 1 << 22
	apiVersion11 = 1<<22 | 1<<12
	apiVersion12 = 1<<22 | 2<<12
	apiVersion13 = 1<<22 | 3<<12
)

// VkStructureType values.
const (
	stApplicationInfo                   = 0
	stInstanceCreateInfo                = 1
	stDeviceQueueCreateInfo             = 2
	stDeviceCreateInfo                  = 3
	stSubmitInfo                        = 4
	stMemoryAllocateInfo                = 5
	stFenceCreateInfo                   = 8
	stBufferCreateInfo                  = 12
	stShaderModuleCreateInfo            = 16
	stPipelineShaderStageCreateInfo     = 18
	stComputePipelineCreateInfo         = 29
	stPipelineLayoutCreateInfo          = 30
	stDescriptorSetLayoutCreateInfo     = 32
	stDescriptorPoolCreateInfo          = 33
	stDescriptorSetAllocateInfo         = 34
	stWriteDescriptorSet                = 35
	stCommandPoolCreateInfo             = 39
	stCommandBufferAllocateInfo         = 40
	stCommandBufferBeginInfo            = 42
	stMemoryBarrier                     = 46
	stPhysicalDeviceVulkan11Features    = 49
	stPhysicalDeviceVulkan12Features    = 51
	stPhysicalDeviceFeatures2           = 1000059000
	stPhysicalDeviceShaderFloat16Int8   = 1000082000
	stPhysicalDevice16BitStorageFeature = 1000083000
	stPhysicalDevice8BitStorageFeatures = 1000177000
)

// Enum and flag values.
const (
	queueComputeBit = 0x2

	memoryPropertyHostVisible  = 0x2
	memoryPropertyHostCoherent = 0x4

	bufferUsageTransferSrc   = 0x1
	bufferUsageTransferDst   = 0x2
	bufferUsageStorageBuffer = 0x20

	sharingModeExclusive = 0

	shaderStageCompute            = 0x20
	descriptorTypeStorageBuffer   = 7
	pipelineBindPointCompute      = 1
	commandBufferLevelPrimary     = 0
	pipelineStageComputeShaderBit = 0x800
	pipelineStageHostBit          = 0x4000

	accessShaderRead  = 0x20
	accessShaderWrite = 0x40
	accessHostRead    = 0x2000

	wholeSize = ^uint64(0)
)

type applicationInfo struct {
	sType              uint32
	_                  uint32
	pNext              unsafe.Pointer
	pApplicationName   *byte
	applicationVersion uint32
	_                  uint32
	pEngineName        *byte
	engineVersion      uint32
	apiVersion         uint32
}

type instanceCreateInfo struct {
	sType                   uint32
	_                       uint32
	pNext                   unsafe.Pointer
	flags                   uint32
	_                       uint32
	pApplicationInfo        *applicationInfo
	enabledLayerCount       uint32
	_                       uint32
	ppEnabledLayerNames     unsafe.Pointer
	enabledExtensionCount   uint32
	_                       uint32
	ppEnabledExtensionNames unsafe.Pointer
}

type physicalDeviceLimits struct {
	maxImageDimension1D                             uint32
	maxImageDimension2D                             uint32
	maxImageDimension3D                             uint32
	maxImageDimensionCube                           uint32
	maxImageArrayLayers                             uint32
	maxTexelBufferElements                          uint32
	maxUniformBufferRange                           uint32
	maxStorageBufferRange                           uint32
	maxPushConstantsSize                            uint32
	maxMemoryAllocationCount                        uint32
	maxSamplerAllocationCount                       uint32
	_                                               uint32
	bufferImageGranularity                          uint64
	sparseAddressSpaceSize                          uint64
	maxBoundDescriptorSets                          uint32
	maxPerStageDescriptorSamplers                   uint32
	maxPerStageDescriptorUniformBuffers             uint32
	maxPerStageDescriptorStorageBuffers             uint32
	maxPerStageDescriptorSampledImages              uint32
	maxPerStageDescriptorStorageImages              uint32
	maxPerStageDescriptorInputAttachments           uint32
	maxPerStageResources                            uint32
	maxDescriptorSetSamplers                        uint32
	maxDescriptorSetUniformBuffers                  uint32
	maxDescriptorSetUniformBuffersDynamic           uint32
	maxDescriptorSetStorageBuffers                  uint32
	maxDescriptorSetStorageBuffersDynamic           uint32
	maxDescriptorSetSampledImages                   uint32
	maxDescriptorSetStorageImages                   uint32
	maxDescriptorSetInputAttachments                uint32
	maxVertexInputAttributes                        uint32
	maxVertexInputBindings                          uint32
	maxVertexInputAttributeOffset                   uint32
	maxVertexInputBindingStride                     uint32
	maxVertexOutputComponents                       uint32
	maxTessellationGenerationLevel                  uint32
	maxTessellationPatchSize                        uint32
	maxTessellationControlPerVertexInputComponents  uint32
	maxTessellationControlPerVertexOutputComponents uint32
	maxTessellationControlPerPatchOutputComponents  uint32
	maxTessellationControlTotalOutputComponents     uint32
	maxTessellationEvaluationInputComponents        uint32
	maxTessellationEvaluationOutputComponents       uint32
	maxGeometryShaderInvocations                    uint32
	maxGeometryInputComponents                      uint32
	maxGeometryOutputComponents                     uint32
	maxGeometryOutputVertices                       uint32
	maxGeometryTotalOutputComponents                uint32
	maxFragmentInputComponents                      uint32
	maxFragmentOutputAttachments                    uint32
	maxFragmentDualSrcAttachments                   uint32
	maxFragmentCombinedOutputResources              uint32
	maxComputeSharedMemorySize                      uint32
	maxComputeWorkGroupCount                        [3]uint32
	maxComputeWorkGroupInvocations                  uint32
	maxComputeWorkGroupSize                         [3]uint32
	subPixelPrecisionBits                           uint32
	subTexelPrecisionBits                           uint32
	mipmapPrecisionBits                             uint32
	maxDrawIndexedIndexValue                        uint32
	maxDrawIndirectCount                            uint32
	maxSamplerLodBias                               float32
	maxSamplerAnisotropy                            float32
	maxViewports                                    uint32
	maxViewportDimensions                           [2]uint32
	viewportBoundsRange                             [2]float32
	viewportSubPixelBits                            uint32
	_                                               uint32
	minMemoryMapAlignment                           uint64 // size_t
	minTexelBufferOffsetAlignment                   uint64
	minUniformBufferOffsetAlignment                 uint64
	minStorageBufferOffsetAlignment                 uint64
	minTexelOffset                                  int32
	maxTexelOffset                                  uint32
	minTexelGatherOffset                            int32
	maxTexelGatherOffset                            uint32
	minInterpolationOffset                          float32
	maxInterpolationOffset                          float32
	subPixelInterpolationOffsetBits                 uint32
	maxFramebufferWidth                             uint32
	maxFramebufferHeight                            uint32
	maxFramebufferLayers                            uint32
	framebufferColorSampleCounts                    uint32
	framebufferDepthSampleCounts                    uint32
	framebufferStencilSampleCounts                  uint32
	framebufferNoAttachmentsSampleCounts            uint32
	maxColorAttachments                             uint32
	sampledImageColorSampleCounts                   uint32
	sampledImageIntegerSampleCounts                 uint32
	sampledImageDepthSampleCounts                   uint32
	sampledImageStencilSampleCounts                 uint32
	storageImageSampleCounts                        uint32
	maxSampleMaskWords                              uint32
	timestampComputeAndGraphics                     uint32
	timestampPeriod                                 float32
	maxClipDistances                                uint32
	maxCullDistances                                uint32
	maxCombinedClipAndCullDistances                 uint32
	discreteQueuePriorities                         uint32
	pointSizeRange                                  [2]float32
	lineWidthRange                                  [2]float32
	pointSizeGranularity                            float32
	lineWidthGranularity                            float32
	strictLines                                     uint32
	standardSampleLocations                         uint32
	optimalBufferCopyOffsetAlignment                uint64
	optimalBufferCopyRowPitchAlignment              uint64
	nonCoherentAtomSize                             uint64
}

type physicalDeviceProperties struct {
	apiVersion        uint32
	driverVersion     uint32
	vendorID          uint32
	deviceID          uint32
	deviceType        uint32
	deviceName        [256]byte
	pipelineCacheUUID [16]byte
	_                 uint32
	limits            physicalDeviceLimits
	sparseProperties  [5]uint32 // VkPhysicalDeviceSparseProperties, five VkBool32
	_                 uint32
}

type queueFamilyProperties struct {
	queueFlags                  uint32
	queueCount                  uint32
	timestampValidBits          uint32
	minImageTransferGranularity [3]uint32 // VkExtent3D
}

type memoryType struct {
	propertyFlags uint32
	heapIndex     uint32
}

type memoryHeap struct {
	size  uint64
	flags uint32
	_     uint32
}

type physicalDeviceMemoryProperties struct {
	memoryTypeCount uint32
	memoryTypes     [32]memoryType
	memoryHeapCount uint32
	memoryHeaps     [16]memoryHeap
}

// physicalDeviceFeatures is VkPhysicalDeviceFeatures: 55 VkBool32, of which
// this package names the three it enables.
type physicalDeviceFeatures [55]uint32

const (
	pdfShaderFloat64 = 39
	pdfShaderInt64   = 40
	pdfShaderInt16   = 41
)

type physicalDeviceFeatures2 struct {
	sType    uint32
	_        uint32
	pNext    unsafe.Pointer
	features physicalDeviceFeatures
	_        uint32
}

type physicalDeviceVulkan11Features struct {
	sType                              uint32
	_                                  uint32
	pNext                              unsafe.Pointer
	storageBuffer16BitAccess           uint32
	uniformAndStorageBuffer16BitAccess uint32
	storagePushConstant16              uint32
	storageInputOutput16               uint32
	multiview                          uint32
	multiviewGeometryShader            uint32
	multiviewTessellationShader        uint32
	variablePointersStorageBuffer      uint32
	variablePointers                   uint32
	protectedMemory                    uint32
	samplerYcbcrConversion             uint32
	shaderDrawParameters               uint32
}

// physicalDeviceVulkan12Features is VkPhysicalDeviceVulkan12Features; its
// 47 VkBool32 are an array, of which this package names the ones it
// enables.
type physicalDeviceVulkan12Features struct {
	sType uint32
	_     uint32
	pNext unsafe.Pointer
	b     [47]uint32
	_     uint32
}

const (
	v12StorageBuffer8BitAccess           = 2
	v12UniformAndStorageBuffer8BitAccess = 3
	v12ShaderFloat16                     = 7
	v12ShaderInt8                        = 8
)

// physicalDevice16BitStorageFeatures is VkPhysicalDevice16BitStorageFeatures
// (core in 1.1).
type physicalDevice16BitStorageFeatures struct {
	sType                              uint32
	_                                  uint32
	pNext                              unsafe.Pointer
	storageBuffer16BitAccess           uint32
	uniformAndStorageBuffer16BitAccess uint32
	storagePushConstant16              uint32
	storageInputOutput16               uint32
}

// physicalDevice8BitStorageFeatures is VkPhysicalDevice8BitStorageFeatures
// (VK_KHR_8bit_storage, core in 1.2).
type physicalDevice8BitStorageFeatures struct {
	sType                             uint32
	_                                 uint32
	pNext                             unsafe.Pointer
	storageBuffer8BitAccess           uint32
	uniformAndStorageBuffer8BitAccess uint32
	storagePushConstant8              uint32
	_                                 uint32
}

// physicalDeviceShaderFloat16Int8Features is
// VkPhysicalDeviceShaderFloat16Int8Features (VK_KHR_shader_float16_int8,
// core in 1.2).
type physicalDeviceShaderFloat16Int8Features struct {
	sType         uint32
	_             uint32
	pNext         unsafe.Pointer
	shaderFloat16 uint32
	shaderInt8    uint32
}

type extensionProperties struct {
	extensionName [256]byte
	specVersion   uint32
}

type deviceQueueCreateInfo struct {
	sType            uint32
	_                uint32
	pNext            unsafe.Pointer
	flags            uint32
	queueFamilyIndex uint32
	queueCount       uint32
	_                uint32
	pQueuePriorities *float32
}

type deviceCreateInfo struct {
	sType                   uint32
	_                       uint32
	pNext                   unsafe.Pointer
	flags                   uint32
	queueCreateInfoCount    uint32
	pQueueCreateInfos       *deviceQueueCreateInfo
	enabledLayerCount       uint32
	_                       uint32
	ppEnabledLayerNames     unsafe.Pointer
	enabledExtensionCount   uint32
	_                       uint32
	ppEnabledExtensionNames unsafe.Pointer
	pEnabledFeatures        *physicalDeviceFeatures
}

type bufferCreateInfo struct {
	sType                 uint32
	_                     uint32
	pNext                 unsafe.Pointer
	flags                 uint32
	_                     uint32
	size                  uint64
	usage                 uint32
	sharingMode           uint32
	queueFamilyIndexCount uint32
	_                     uint32
	pQueueFamilyIndices   *uint32
}

type memoryRequirements struct {
	size           uint64
	alignment      uint64
	memoryTypeBits uint32
	_              uint32
}

type memoryAllocateInfo struct {
	sType           uint32
	_               uint32
	pNext           unsafe.Pointer
	allocationSize  uint64
	memoryTypeIndex uint32
	_               uint32
}

type shaderModuleCreateInfo struct {
	sType    uint32
	_        uint32
	pNext    unsafe.Pointer
	flags    uint32
	_        uint32
	codeSize uint64 // size_t, bytes
	pCode    *uint32
}

type descriptorSetLayoutBinding struct {
	binding            uint32
	descriptorType     uint32
	descriptorCount    uint32
	stageFlags         uint32
	pImmutableSamplers unsafe.Pointer
}

type pushConstantRange struct {
	stageFlags uint32
	offset     uint32
	size       uint32
}

type descriptorSetLayoutCreateInfo struct {
	sType        uint32
	_            uint32
	pNext        unsafe.Pointer
	flags        uint32
	bindingCount uint32
	pBindings    *descriptorSetLayoutBinding
}

type pipelineLayoutCreateInfo struct {
	sType                  uint32
	_                      uint32
	pNext                  unsafe.Pointer
	flags                  uint32
	setLayoutCount         uint32
	pSetLayouts            *uint64
	pushConstantRangeCount uint32
	_                      uint32
	pPushConstantRanges    unsafe.Pointer
}

type pipelineShaderStageCreateInfo struct {
	sType               uint32
	_                   uint32
	pNext               unsafe.Pointer
	flags               uint32
	stage               uint32
	module              uint64
	pName               *byte
	pSpecializationInfo unsafe.Pointer
}

type computePipelineCreateInfo struct {
	sType              uint32
	_                  uint32
	pNext              unsafe.Pointer
	flags              uint32
	_                  uint32
	stage              pipelineShaderStageCreateInfo
	layout             uint64
	basePipelineHandle uint64
	basePipelineIndex  int32
	_                  uint32
}

type descriptorPoolSize struct {
	typ             uint32
	descriptorCount uint32
}

type descriptorPoolCreateInfo struct {
	sType         uint32
	_             uint32
	pNext         unsafe.Pointer
	flags         uint32
	maxSets       uint32
	poolSizeCount uint32
	_             uint32
	pPoolSizes    *descriptorPoolSize
}

type descriptorSetAllocateInfo struct {
	sType              uint32
	_                  uint32
	pNext              unsafe.Pointer
	descriptorPool     uint64
	descriptorSetCount uint32
	_                  uint32
	pSetLayouts        *uint64
}

type descriptorBufferInfo struct {
	buffer uint64
	offset uint64
	rng    uint64 // range
}

type writeDescriptorSet struct {
	sType            uint32
	_                uint32
	pNext            unsafe.Pointer
	dstSet           uint64
	dstBinding       uint32
	dstArrayElement  uint32
	descriptorCount  uint32
	descriptorType   uint32
	pImageInfo       unsafe.Pointer
	pBufferInfo      *descriptorBufferInfo
	pTexelBufferView unsafe.Pointer
}

type commandPoolCreateInfo struct {
	sType            uint32
	_                uint32
	pNext            unsafe.Pointer
	flags            uint32
	queueFamilyIndex uint32
}

type commandBufferAllocateInfo struct {
	sType              uint32
	_                  uint32
	pNext              unsafe.Pointer
	commandPool        uint64
	level              uint32
	commandBufferCount uint32
}

type commandBufferBeginInfo struct {
	sType            uint32
	_                uint32
	pNext            unsafe.Pointer
	flags            uint32
	_                uint32
	pInheritanceInfo unsafe.Pointer
}

type memoryBarrier struct {
	sType         uint32
	_             uint32
	pNext         unsafe.Pointer
	srcAccessMask uint32
	dstAccessMask uint32
}

type fenceCreateInfo struct {
	sType uint32
	_     uint32
	pNext unsafe.Pointer
	flags uint32
	_     uint32
}

type submitInfo struct {
	sType                uint32
	_                    uint32
	pNext                unsafe.Pointer
	waitSemaphoreCount   uint32
	_                    uint32
	pWaitSemaphores      unsafe.Pointer
	pWaitDstStageMask    unsafe.Pointer
	commandBufferCount   uint32
	_                    uint32
	pCommandBuffers      *uintptr
	signalSemaphoreCount uint32
	_                    uint32
	pSignalSemaphores    unsafe.Pointer
}
