# rlx: build, test, benchmark, fuzz and lint.
GO          ?= go
BIN         ?= bin
BENCHFLAGS  ?=
FUZZTIME    ?= 60s
# The smoke in `make test` counts executions rather than seconds: steady on a
# loaded CI machine, and clear of Go 1.26's fuzztime deadline race.
SMOKE_HIR   ?= 20000x
SMOKE_DIM   ?= 200000x
SMOKE_OTHER ?= 50000x
# FuzzProgram writes, opens and may run an artifact per input: slower.
SMOKE_PROGRAM ?= 2000x
# A failing input is still reported (and written) with a short minimize.
SMOKE_ENV   ?= FUZZ_MINIMIZE=1s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# What the race and purego runs leave to the main one: GPU devices, qemu,
# the golden LIR and Metal text (no concurrency, no kernels run), and the native
# code grids and math header (C, the same under either
# flag; compiling hundreds of kernels again would only cost time).
RACE_SKIP   ?= GPU|Vulkan|Arm64|Golden|TestNativeElementwise|TestNativePool2D|TestNativeConv|TestNativeDepthwise|TestNativeSoftmax|TestNativeReduce|TestNativeWinograd|TestNativeTranspose|TestNativeEpilogue|TestMathHeader

# The e2e tests of the ONNX importer (exports, torch2, single operators,
# recurrences: every TestONNX* but TestONNXConformance, the shared models):
# the race and purego runs check the runtime's Go code, which the shared
# and bundled models cover; these re-check the importer.
IMPORT_TESTS ?= TestExports|TestTorch2|TestLowered|TestONNX[^C]|TestONNXCa|TestONNXConv

# The CLI tests run rlxc and rlxrun as built for them, without -race (the
# detector sees nothing of them), and on the models and cases
# TestONNXConformance runs in process with the purego kernels: the race and
# purego runs leave them to the main one.
CLI_TESTS   ?= TestCLIConformance|TestCLIImport

# The race run's packages: the runtime's (loader, kernels, worker pool,
# native code calls, GPU devices), the backend, the artifact and the e2e
# runs: every package under those trees but the code generators (cgen,
# kernelgen, kir, codegen) and the toolchain wrappers, which run no
# goroutines of their own (under -race they only re-ran their numeric
# grids at several times the cost). A new package joins by default.
RACE_NOT    ?= /cpu/cgen$$|/gpu/kernelgen$$|/gpu/kir$$|/gpu/codegen$$|/toolchain$$
RACE_PKGS   ?= ./e2e ./pkg/loader/... ./pkg/artifact/... $(shell $(GO) list ./pkg/targets/... | grep -Ev '$(RACE_NOT)')

# bash for pipefail: make test pipes go test into its summary.
SHELL := /bin/bash

.PHONY: all build deps test test-arm64 vet fuzz fuzz-smoke bench bench-ops bench-go lint check-models demo clean

# What the GPU targets' tests need from Debian: glslangValidator and
# spirv-val (vulkan kernels to SPIR-V), clang (cuda kernels to PTX), and the
# Vulkan loader with Mesa's llvmpipe (a Vulkan device on the CPU) plus the
# Khronos validation layer; qemu-user runs the arm64 (NEON) kernel tests;
# GNU time measures the peak memory of rlxrun refusing forged artifacts.
# Without them those tests skip, except under
# CI=true, where they fail.
DEBIAN_DEPS = time glslang-tools spirv-tools clang lld libclang-rt-14-dev libc6-arm64-cross libvulkan1 mesa-vulkan-drivers vulkan-validationlayers qemu-user

all: build

## build: compile rlxc and rlxrun into ./bin
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## deps: install the Debian packages the GPU targets' tests need (as root, or with sudo)
deps:
	@missing=""; for p in $(DEBIAN_DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "installing:$$missing"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

## test: vet, unit tests (then every skipped test with its reason; under CI=true a skip for anything but missing hardware fails), lint, the race detector on the concurrent parts, the pure-Go kernels (purego), the testdata models and a short fuzz smoke (what CI runs)
test: vet
	set -o pipefail; $(GO) test -json ./... | $(GO) run ./internal/tools/testsummary $(if $(filter true,$(CI)),-strict)
	$(GO) test -race -skip '$(RACE_SKIP)|$(IMPORT_TESTS)|$(CLI_TESTS)' $(RACE_PKGS)
	$(GO) test -tags purego -skip '$(RACE_SKIP)|$(IMPORT_TESTS)|$(CLI_TESTS)' ./pkg/targets/cpu/... ./e2e
	$(MAKE) --no-print-directory test-arm64
	$(MAKE) --no-print-directory check-models
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory lint

vet:
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./pkg/targets/cpu/...

## test-arm64: the arm64 NEON GEMM kernel against the portable one and the reference, and the native code loader, cross-compiled and run under qemu-aarch64 (the e2e test TestArm64UnderQemu runs whole armv8.2-a artifacts)
test-arm64:
	@mkdir -p $(BIN)
	@if command -v qemu-aarch64 >/dev/null; then \
		GOARCH=arm64 $(GO) test -c -o $(BIN)/gemm_arm64.test ./pkg/targets/cpu/kernels/gemm && \
		GOARCH=arm64 $(GO) test -c -o $(BIN)/conv_arm64.test ./pkg/targets/cpu/kernels/conv && \
		qemu-aarch64 $(BIN)/gemm_arm64.test -test.run 'Gemm|MatMul|Packed' -test.skip 'PortableKernelSuite' && \
		qemu-aarch64 $(BIN)/conv_arm64.test -test.run 'Conv2D|Packed' && \
		GOARCH=arm64 CGO_ENABLED=0 $(GO) test -c -o $(BIN)/native_arm64.test ./pkg/targets/cpu/native && \
		qemu-aarch64 -L /usr/aarch64-linux-gnu $(BIN)/native_arm64.test; \
	elif [ "$$CI" = true ]; then echo "qemu-aarch64 is missing (make deps installs qemu-user)"; exit 1; \
	else echo "skipping the arm64 kernel tests: no qemu-aarch64 (apt-get install qemu-user)"; fi

## check-models: every bundled model checks and is in canonical form
check-models: build
	$(BIN)/rlxc check testdata/models/*.hir
	$(BIN)/rlxc fmt --check testdata/models/*.hir

## demo: build a bundled transformer encoder for two sequence lengths and run it
demo: build
	$(BIN)/rlxc build testdata/models/encoder.hir --bind batch=1 --bind seq=16,128 --random-weights 1 -o $(BIN)/encoder.rlx
	$(BIN)/rlxc inspect $(BIN)/encoder.rlx
	$(BIN)/rlxrun $(BIN)/encoder.rlx --fill random --seed 1

## fuzz: run every fuzz target for FUZZTIME (default 60s) each
# Every parser and loader has a fuzz target: PKG:TARGET. The importer's
# (e2e, models built around its operators) stay out of the smoke: an
# instrumented build of e2e costs more than the smoke's whole budget.
FUZZ_TARGETS = ./pkg/hir:FuzzParseCheck ./pkg/dim:FuzzParse ./pkg/artifact:FuzzOpenBytes \
               ./pkg/artifact:FuzzCraftedSection ./pkg/artifact:FuzzUnmarshalManifest \
               ./pkg/tensor/npy:FuzzRead ./pkg/tensor/safetensors:FuzzParse ./pkg/onnx/onnxpb:FuzzDecode \
               ./pkg/targets/gpu/runtime:FuzzNew ./pkg/loader:FuzzProgram ./pkg/targets/cpu/native:FuzzLoad \
               ./e2e:FuzzONNXShapeValueND ./e2e:FuzzONNXScatterND ./e2e:FuzzONNXConv3D ./e2e:FuzzONNXNorms \
               ./e2e:FuzzONNXEinsum ./e2e:FuzzONNXGridSample ./e2e:FuzzONNXTopK \
               ./e2e:FuzzONNXGatherElements ./e2e:FuzzONNXUpsample \
               ./e2e:FuzzONNXAttention ./e2e:FuzzONNXQuant ./e2e:FuzzONNXIf

fuzz:
	@for t in $(FUZZ_TARGETS); do scripts/fuzz.sh $${t%%:*} $${t##*:} $(FUZZTIME) || exit 1; done

fuzz-smoke:
	$(SMOKE_ENV) scripts/fuzz.sh ./pkg/hir FuzzParseCheck $(SMOKE_HIR)
	$(SMOKE_ENV) scripts/fuzz.sh ./pkg/dim FuzzParse $(SMOKE_DIM)
	@for t in ./pkg/artifact:FuzzOpenBytes ./pkg/tensor/npy:FuzzRead ./pkg/tensor/safetensors:FuzzParse ./pkg/onnx/onnxpb:FuzzDecode ./pkg/onnx/onnxpb:FuzzLoadExternal ./pkg/targets/gpu/runtime:FuzzNew; do \
		$(SMOKE_ENV) scripts/fuzz.sh $${t%%:*} $${t##*:} $(SMOKE_OTHER) || exit 1; done
	$(SMOKE_ENV) scripts/fuzz.sh ./pkg/loader FuzzProgram $(SMOKE_PROGRAM)

## bench: rlx against ONNX Runtime and OpenBLAS on this machine, one table (cmd/rlxbench; BENCHFLAGS="--models mlp --json out.json")
bench: build
	$(GO) run ./cmd/rlxbench --bin $(BIN) $(BENCHFLAGS)

## bench-ops: single-operator ONNX models over a grid per operator family, rlx against ONNX Runtime at 1 and 2 threads, one table and a per-family summary (cmd/rlxbench --ops; the full grid, 167 points, takes minutes (docs/perf/ops.md); BENCHFLAGS="--ops-filter conv --json out.json" (the filter matches families, op names and attributes), or --quick)
bench-ops: build
	$(GO) run ./cmd/rlxbench --ops --bin $(BIN) $(BENCHFLAGS)

## bench-go: the Go benchmarks
bench-go:
	$(GO) test ./... -run '^$$' -bench . -benchmem

## lint: gofmt, go vet and staticcheck must be clean
lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf $(BIN)
