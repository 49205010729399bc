#!/usr/bin/env bash
# The GPU checks of the cuda target, as one script for a machine with an
# NVIDIA GPU (issue 22). That machine needs no Go and no clang: everything
# is built here first, into .dev/gpu (ignored), and travels with the checkout.
#
#   scripts/gpu-check.sh prepare     # here: binaries, test binaries, PTX, scripts
#   scripts/gpu-check.sh run         # there, from the checkout's root
#   scripts/gpu-check.sh cpu         # there: the host's CPU alone (carry .dev/cpu)
#
# run: the integer kernels' tests and benchmarks on the host's CPU (an
# Intel Xeon with AVX-512 VNNI: the kernels' other vendor), the pool's
# fixed cost and small products at 1 to 16 threads, the driver API
# tests (streams, graphs, events), the kernel IR's
# numeric cases as clang's PTX, every bundled model on cuda against the cpu
# target at two bindings, the shared models (exported there again with their
# fixed seeds by ../shared/bench/gpu/models.py; the encoder's shared export
# travels) against PyTorch and the cpu
# target, and a timing table (graph replay, launch by launch, a per-kernel
# profile). ANCHOR=1 adds ../shared/bench/gpu/anchor.py (PyTorch eager, CUDA
# graphs, torch.compile; ONNX Runtime and rlx cpu at 1, 4, 16 threads), and
# SCALING=1 the cpu target against ONNX Runtime at 1, 2, 4, 8 and 16 threads
# (PROFILE=8,16 adds per-kernel profiles at those counts), and
# PRECISION=1 the tensor-core builds (--precision tf32 and bf16: their
# e2e tests and bench.py's timings; off by default to keep one call
# within the device tool's 10 minutes): native code
# built here (see native_artifacts) where this machine has clang; with
# VARIANTS="name=ref ..." at prepare, rlxrun built from each git ref
# races on those artifacts at 1, 4, 8 and 16 threads (variants.py).
# cpu: the host's CPU alone, from what prepare gathers into .dev/cpu
# (carry that folder only: the whole of .dev/gpu is near the device
# tool's 64 MiB): the integer kernels' tests, the pool's fixed cost and
# small products at 1 to 16 threads, the VARIANTS race with each
# variant's pool benchmark, and the scaling table against ONNX Runtime
# (PROFILE=16 by default). About 3 minutes.
# Results go to $OUT (the device tool's folder) or /tmp/gpu-check.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.dev/gpu
C=.dev/cpu

prepare() {
	set -e
	rm -rf "$D"
	mkdir -p "$D/bin" "$D/ptx" "$D/bench"
	local ld=(-ldflags=-s\ -w)
	go build "${ld[@]}" -o "$D/bin/" ./cmd/rlxc ./cmd/rlxrun
	go test -c "${ld[@]}" -o "$D/bin/cu.test" ./pkg/targets/gpu/cu
	go test -c "${ld[@]}" -o "$D/bin/kir.test" ./pkg/targets/gpu/kir
	go test -c "${ld[@]}" -o "$D/bin/e2e.test" ./e2e
	# the integer kernels (VNNI, AVX2, the Go twin) on the host's CPU
	go test -c "${ld[@]}" -o "$D/bin/qgemm.test" ./pkg/targets/cpu/kernels/qgemm
	# the pool's fixed cost and small products' scaling, 1 to 16 threads
	go test -c "${ld[@]}" -o "$D/bin/parallel.test" ./pkg/targets/cpu/kernels/parallel
	go test -c "${ld[@]}" -o "$D/bin/gemm.test" ./pkg/targets/cpu/kernels/gemm
	# The kir test writes its kernels' PTX (clang) and then skips: no GPU here.
	(cd pkg/targets/gpu/kir && RLX_KIR_WRITE_PTX="$PWD/../../../../$D/ptx" go test -count=1 -run TestGPUCUDA . >/dev/null)
	cp ../shared/bench/gpu/anchor.py ../shared/bench/gpu/models.py "$D/bench/"
	# PyTorch 2.11's TorchScript exporter bakes the encoder's sequence length
	# into a Reshape (its alt case cannot build): the shared export travels.
	mkdir -p "$D/shared"
	cp -r ../shared/models/encoder.onnx ../shared/models/encoder ../shared/models/manifest.json "$D/shared/"
	native_artifacts
	variant_builds
	cpu_bundle
	du -sh "$D" "$C"
}

# cpu_bundle gathers what cpu needs into $C: rlxrun and the CPU test
# binaries, the native artifacts, the variants, the export scripts, the
# encoder's shared export, and the shared models' b1 inputs with their
# manifest (for the variants' race, which needs no export).
cpu_bundle() {
	rm -rf "$C"
	mkdir -p "$C/bin" "$C/m"
	cp "$D/bin/rlxrun" "$D/bin/qgemm.test" "$D/bin/parallel.test" "$D/bin/gemm.test" "$C/bin/"
	cp -r "$D/bench" "$D/shared" "$C/"
	cp "$D"/native-*.tar.gz "$C/" 2>/dev/null || true
	[ -d "$D/variants" ] && cp -r "$D/variants" "$C/"
	python3 - ../shared/models "$C/m" <<-'PY'
		import json, os, shutil, sys
		src, dst = sys.argv[1:]
		man = json.load(open(os.path.join(src, "manifest.json")))
		shutil.copy(os.path.join(src, "manifest.json"), dst)
		for m in man["models"].values():
		    for f in m["cases"]["b1"]["inputs"].values():
		        os.makedirs(os.path.dirname(os.path.join(dst, f["file"])), exist_ok=True)
		        shutil.copy(os.path.join(src, f["file"]), os.path.join(dst, f["file"]))
	PY
}

# export_models exports the shared models there again into $2 (see
# export_shared.py; the encoder's shared export travels from $1).
export_models() {
	local from=$1 shm=$2 out=$3
	timeout 240 python3 scripts/gpu/export_shared.py "$from/bench" --out "$shm" >"$out/export.txt" 2>&1 || {
		tail -20 "$out/export.txt"
		return 1
	}
	grep -E '^[a-z_0-9]+: ' "$out/export.txt"
	cp -r "$from/shared/encoder.onnx" "$from/shared/encoder" "$shm/"
	python3 -c 'import json, sys
d, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d["models"]["encoder"] = s["models"]["encoder"]
json.dump(d, open(sys.argv[1], "w"), indent=1)' "$shm/manifest.json" "$from/shared/manifest.json"
}

# cpu runs on the device host's CPU alone (see the top of this file).
cpu() {
	local out=${OUT:-/tmp/gpu-check} B=$C/bin rc=0 level v th
	mkdir -p "$out"
	export PYTHONUNBUFFERED=1
	echo "== machine"
	grep -m1 'model name' /proc/cpuinfo
	nproc
	echo "== integer kernels"
	timeout 120 "$B/qgemm.test" 2>&1 | tail -1 | tee -a "$out/tests.txt" || rc=1
	echo "== the pool's cost and small products across thread counts"
	timeout 60 "$B/parallel.test" -test.run XXX -test.bench For -test.benchtime 20000x 2>&1 | grep ns/op | tee -a "$out/cpu-bench.txt"
	timeout 120 "$B/gemm.test" -test.run XXX -test.bench SmallProductThreads -test.benchtime 300x 2>&1 | grep GFLOP | tee -a "$out/cpu-bench.txt"
	level=$(native_level)
	mkdir -p /tmp/native
	tar -C /tmp/native -xzf "$C/native-$level.tar.gz" || rc=1
	if [ -d "$C/variants" ]; then
		echo "== each variant's empty For"
		for th in 4 8 16; do
			for v in "$C"/variants/parallel-*.test; do
				echo -n "$(basename "$v" .test) "
				timeout 60 "$v" -test.run XXX -test.bench "For/threads=$th/" -test.benchtime 20000x 2>&1 | grep ns/op
			done
		done | tee -a "$out/cpu-bench.txt"
		echo "== rlxrun variants"
		timeout 300 python3 scripts/gpu/variants.py "$C/variants" /tmp/native "$C/m" 1,4,8,16 2 | tee "$out/variants.txt" || rc=1
	fi
	echo "== cpu thread scaling (native code for $level, built where clang is)"
	export_models "$C" /tmp/shm "$out" || rc=1
	PREBUILT=/tmp/native PROFILE=${PROFILE:-16} OUT="$out" timeout 240 python3 scripts/gpu/cpu_scaling.py "$B" /tmp/shm >"$out/scaling.txt" 2>&1 || rc=1
	grep -v '^{' "$out/scaling.txt"
	echo "== rc $rc"
	return $rc
}

# variant_builds builds rlxrun from each git ref of VARIANTS ("name=ref
# ..."; "name=." is the working tree) into $D/variants, for run's
# comparison of scheduling changes across thread counts on that host.
variant_builds() {
	[ -n "${VARIANTS:-}" ] || return 0
	local v name ref wt
	mkdir -p "$D/variants"
	for v in $VARIANTS; do
		name=${v%%=*} ref=${v#*=}
		if [ "$ref" = . ]; then
			go build -ldflags='-s -w' -o "$D/variants/rlxrun-$name" ./cmd/rlxrun || return
			go test -c -ldflags='-s -w' -o "$D/variants/parallel-$name.test" ./pkg/targets/cpu/kernels/parallel || return
			continue
		fi
		wt=$(mktemp -d)
		git worktree add -q --detach "$wt" "$ref" &&
			(cd "$wt" && go build -ldflags='-s -w' -o "$OLDPWD/$D/variants/rlxrun-$name" ./cmd/rlxrun &&
				go test -c -ldflags='-s -w' -o "$OLDPWD/$D/variants/parallel-$name.test" ./pkg/targets/cpu/kernels/parallel)
		local rc=$?
		git worktree remove --force "$wt"
		[ $rc -eq 0 ] || return $rc
	done
}

# native_artifacts builds each shared model's b1 case for the cpu target
# with native code, one set for x86-64-v4 and one for x86-64-v3 (run
# takes the best the host runs: one artifact of both levels would leave
# stride-2 convolutions to the runtime, since its program serves both),
# for SCALING: that host has no clang. The weights are zeroed: a kernel
# costs the same whatever its weights hold (checked here: the LIR is the
# same), and zeros pack 100 MB of artifacts into a few hundred KB that
# fit the device tool's size limit.
native_artifacts() {
	command -v clang >/dev/null || {
		echo "no clang: SCALING will time the portable build there" >&2
		return
	}
	local t level
	t=$(mktemp -d)
	python3 - ../shared/models/manifest.json >"$t/cases" <<-'PY'
		import json, sys
		for name, m in json.load(open(sys.argv[1]))["models"].items():
		    print(name, m["file"], " ".join(f"--bind={k}={v}" for k, v in m["cases"]["b1"]["binding"].items()))
	PY
	while read -r name file binds; do
		"$D/bin/rlxc" import "../shared/models/$file" -o "$t/$name.hir" >/dev/null &&
			python3 scripts/gpu/zero_weights.py "$t/$name.safetensors" || return
		for level in x86-64-v4 x86-64-v3; do
			mkdir -p "$t/$level"
			# shellcheck disable=SC2086 # binds is a word list
			"$D/bin/rlxc" build "$t/$name.hir" --target cpu --cpu $level $binds -o "$t/$level/$name.rlx" --no-cache || return
		done
	done <"$t/cases"
	for level in x86-64-v4 x86-64-v3; do
		tar -C "$t/$level" -czf "$D/native-$level.tar.gz" .
	done
	rm -rf "$t"
}

# native_level prints the best CPU level this host runs native code for.
native_level() {
	local f
	for f in avx512f avx512bw avx512cd avx512dq avx512vl; do
		grep -qw "$f" /proc/cpuinfo || {
			echo x86-64-v3
			return
		}
	done
	echo x86-64-v4
}

run() {
	local out=${OUT:-/tmp/gpu-check} B=$D/bin rc=0
	mkdir -p "$out"
	export RLX_CUDA_REQUIRE=1 PYTHONUNBUFFERED=1
	echo "== machine"
	nvidia-smi -L
	grep -m1 'model name' /proc/cpuinfo
	nproc
	for t in clang nvcc; do echo "$t: $(command -v $t || echo none)"; done
	# NVRTC compiles the artifacts' CUDA C where rlxc had no clang.
	local nvrtc
	nvrtc=$(find / -xdev -name 'libnvrtc.so*' 2>/dev/null | grep -v -e stub -e builtins | head -1)
	echo "nvrtc: ${nvrtc:-none}"
	[ -n "$nvrtc" ] && export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

	echo "== cu (driver API)"
	timeout 120 "$B/cu.test" -test.run 'TestOpen' -test.v 2>&1 | grep -E '^(---|FAIL|ok|PASS)|profiled|device' | tee -a "$out/tests.txt" || rc=1
	echo "== kir (clang's PTX, and NVRTC)"
	(cd pkg/targets/gpu/kir && RLX_KIR_PTX_DIR="$PWD/../../../../$D/ptx" timeout 120 "../../../../$B/kir.test" -test.run 'TestGPUCUDA' 2>&1 | tail -5) | tee -a "$out/tests.txt" || rc=1

	echo "== integer kernels on this host's CPU (every kernel it runs against the references, then their rates)"
	timeout 120 "$B/qgemm.test" -test.v 2>&1 | grep -E '^(--- FAIL|FAIL|ok|PASS)' | tee -a "$out/tests.txt" || rc=1
	timeout 120 "$B/qgemm.test" -test.run XXX -test.bench 'Gemm|Conv' -test.benchtime 20x 2>&1 | grep -E 'GOP/s' | tee -a "$out/cpu-bench.txt"

	echo "== the pool's cost and small products across thread counts"
	timeout 60 "$B/parallel.test" -test.run XXX -test.bench For -test.benchtime 20000x 2>&1 | grep ns/op | tee -a "$out/cpu-bench.txt"
	timeout 120 "$B/gemm.test" -test.run XXX -test.bench SmallProductThreads -test.benchtime 300x 2>&1 | grep GFLOP | tee -a "$out/cpu-bench.txt"

	echo "== export the shared models"
	local shm=/tmp/shm
	export_models "$D" "$shm" "$out" || rc=1

	if [ "${SCALING:-0}" = 1 ]; then
		echo "== cpu thread scaling"
		local level
		level=$(native_level)
		if [ -f "$D/native-$level.tar.gz" ]; then
			echo "native code for $level, built where clang is"
			mkdir -p /tmp/native && tar -C /tmp/native -xzf "$D/native-$level.tar.gz" && export PREBUILT=/tmp/native
		fi
		timeout 240 python3 scripts/gpu/cpu_scaling.py "$B" "$shm" >"$out/scaling.txt" 2>&1 || rc=1
		grep -v '^{' "$out/scaling.txt"
		if [ -d "$D/variants" ] && [ -n "${PREBUILT:-}" ]; then
			echo "== rlxrun variants"
			timeout 300 python3 scripts/gpu/variants.py "$D/variants" "$PREBUILT" "$shm" || rc=1
		fi
	fi

	echo "== e2e: bundled and shared models on cuda"
	local skip=Precision
	[ "${PRECISION:-0}" = 1 ] && skip=NONE
	(cd e2e && RLX_SHARED_MODELS="$shm" timeout 400 ../$B/e2e.test -test.run 'TestCUDA|TestONNXConformanceCUDA' -test.skip "$skip" -test.v 2>&1) >"$out/e2e.txt"
	[ $? -eq 0 ] || rc=1
	grep -E '^\s*(--- |FAIL|ok|PASS)|max\|diff\||panic' "$out/e2e.txt" | grep -vE -- '--- PASS: TestCUDA(Precision)?MatchesCPU/' | head -80

	echo "== timing"
	timeout 300 python3 scripts/gpu/bench.py "$B" "$shm" 300 >"$out/bench.txt" 2>&1 || rc=1
	grep -v '^{' "$out/bench.txt"

	if [ "${ANCHOR:-0}" = 1 ]; then
		echo "== anchor"
		(RLX_BIN="$PWD/$B" OUT="$out" timeout 330 python3 "$D/bench/anchor.py" 2>&1 | grep -v '^{') || rc=1
	fi
	echo "== rc $rc"
	return $rc
}

case "${1:-}" in
prepare) prepare ;;
run) run ;;
cpu) cpu ;;
*)
	echo "usage: $0 prepare|run|cpu" >&2
	exit 2
	;;
esac
