# rlx: build, test, benchmark, fuzz and lint.
GO          ?= go
BIN         ?= bin
FUZZTIME    ?= 60s
SMOKETIME   ?= 10s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build test vet fmt-check fuzz fuzz-smoke bench lint check-models clean

all: build

## build: compile rlxc and rlxrun into ./bin
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## test: vet, unit tests, the testdata models and a short fuzz smoke (what CI runs)
test: vet
	$(GO) test ./...
	$(MAKE) --no-print-directory check-models
	$(MAKE) --no-print-directory fuzz-smoke

vet:
	$(GO) vet ./...

## check-models: every bundled model checks and is in canonical form
check-models: build
	$(BIN)/rlxc check testdata/models/*.hir
	$(BIN)/rlxc fmt --check testdata/models/*.hir

## fuzz: run every fuzz target for FUZZTIME (default 60s) each
fuzz:
	$(GO) test ./pkg/hir -run '^$$' -fuzz '^FuzzParseCheck$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	$(GO) test ./pkg/dim -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s

fuzz-smoke:
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(SMOKETIME)

## bench: Go benchmarks
bench:
	$(GO) test ./... -run '^$$' -bench . -benchmem

## lint: gofmt, go vet and staticcheck must be clean
lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf $(BIN)
