#!/bin/sh
# cuda_rt_mock.sh: libtxrt's device mode against a pretend CUDA driver.
#
# Builds tests/unit/cuda_rt_mock.c as libcuda.so.1 in a temporary folder
# put first on the loader path (so it is the driver libtxrt opens, also
# on a machine with a GPU) and runs `cuda_rt_test mock`: device memory,
# a launch and its parameters, the module cache, the limit checks and
# their messages, the opt-in to more than 48 KiB of shared memory, and
# driver errors (a PTX that does not load, with the JIT's log; a kernel
# that is not in the module), and a txc entry point's TMA tensor map.
set -u
top=${abs_top_srcdir:-.}
build=${abs_top_builddir:-.}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
if ! ${CC:-cc} -std=c11 -shared -fPIC -Wl,-soname,libcuda.so.1 -I"$top" -I"$top/rt" \
    -o "$tmp/libcuda.so.1" \
    "$top/tests/unit/cuda_rt_mock.c"; then
	echo "ERROR: cannot build the pretend driver"
	exit 99
fi
LD_LIBRARY_PATH=$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$build/tests/unit/cuda_rt_test" mock || exit 1

# A txc entry point with a TMA tile (bench/kernels/hgemm128_tma_cuda.tx):
# the host encodes A's map (f16, K x M, a row pitch of 2K bytes, a box of
# 32 x 128, 64-byte swizzle, zeros out of bounds) with the driver, passes
# those 128 bytes by value and sets tma_on; with K = 70 (140-byte rows)
# it encodes nothing and passes tma_on = 0 (the kernel's cp.async path).
[ -n "${TXC:-}" ] && [ -x "$TXC" ] || { echo "PASS: cuda_rt_mock (no txc: the TMA part skipped)"; exit 0; }
lib=$build/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "PASS: cuda_rt_mock (no static libtxrt: the TMA part skipped)"; exit 0; }
cat >"$tmp/tma.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "txrt.h"
int hgemm128_tma_cuda(int64_t M, int64_t N, int64_t K, const void *A, const void *B, float *C);
int
main(int argc, char **argv)
{
	int64_t M = 200, N = 136, K = argc > 1 ? atoll(argv[1]) : 72;
	void *A = txrt_cuda_malloc((size_t)(M * K * 2)), *B = txrt_cuda_malloc((size_t)(K * N * 2));
	float *C = txrt_cuda_malloc((size_t)(M * N * 4));
	int rc = hgemm128_tma_cuda(M, N, K, A, B, C);
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (rc || !lib) {
		printf("rc %d: %s\n", rc, txrt_last_error());
		return 1;
	}
	printf("%s; launches with the map %d; tma_on %lld\n", (char *)dlsym(lib, "mock_tma_desc"),
	    *(int *)dlsym(lib, "mock_tma_launches"), *(long long *)dlsym(lib, "mock_tma_on"));
	/* the sanitized run's leak check: every buffer freed */
	txrt_cuda_free(A);
	txrt_cuda_free(B);
	txrt_cuda_free(C);
	return 0;
}
C
"$TXC" --target=cuda --cuda-arch=sm_90 -o "$tmp/k.o" "$top/bench/kernels/hgemm128_tma_cuda.tx" &&
${CC:-cc} -I"$top/rt" -o "$tmp/tma" "$tmp/tma.c" "$tmp/k.o" "$lib" -lpthread -ldl -lm ||
    { echo "FAIL: cannot build the TMA entry point"; exit 1; }
fails=0
for k in 72 70; do
	got=$(TXRT_CUDA=device LD_LIBRARY_PATH=$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/tma" $k)
	case $k in
	72) want="dtype 6 dims 72 x 200 stride 144 box 32 x 128 swizzle 2 l2 2 oob 0; launches with the map 1; tma_on 1" ;;
	70) want="; launches with the map 0; tma_on 0" ;;
	esac
	echo "K=$k: $got"
	[ "$got" = "$want" ] || { echo "FAIL: K=$k: '$want' expected"; fails=$((fails + 1)); }
done
[ $fails -eq 0 ] || exit 1
echo "PASS: cuda_rt_mock"
