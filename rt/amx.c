/* amx.c: libtxrt's AMX micro-kernels (txrt_amx_i8: tdpbssd,
 * txrt_amx_bf16: tdpbf16ps; the body is amx_gemm.h) and the operating
 * system's leave to use the tiles.
 *
 * Linux enables AMX's tile data (XTILEDATA, 8 KiB of state a thread) only
 * for processes that ask: arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA), once a process, before any thread touches a tile;
 * without it the first tile instruction kills the process (SIGILL).
 * txrt_cpu_require asks (amx_permit) when an object is compiled for a CPU
 * with AMX, and fails the entry point with a message if refused.  The
 * kernels ask too (JIT-compiled code has no such check) and, where the
 * CPU has no AMX or the leave is refused, run their emulation
 * (amx_emu.c) instead: slower, never wrong, never a signal.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "txrt.h"
#include "amx.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
#endif

static int permit_state;          /* 0 not asked, 1 granted, -1 refused */
static const char *permit_why = "";

bool
amx_permit(const char **why)
{
	int s = __atomic_load_n(&permit_state, __ATOMIC_ACQUIRE);
	if (!s) {
		s = 1;
#if defined(__linux__) && defined(__x86_64__)
		/* racing threads ask alike; the kernel grants a process once */
		if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) {
			permit_why = strerror(errno);
			s = -1;
		}
#endif
		__atomic_store_n(&permit_state, s, __ATOMIC_RELEASE);
	}
	if (s < 0 && why)
		*why = permit_why;
	return s > 0;
}

void
amx_pack_b(unsigned char *pack, const unsigned char *b, int64_t bsk, int64_t k0, int64_t kc,
    int64_t nq, int64_t nr, int es)
{
	int G = 4 / es;
	int64_t nt = (nr + 31) / 32 * 2;
	memset(pack, 0, (size_t)(nt * nq * 64));
	for (int64_t q = 0; q < nq && q * G < kc; q++) {
		const unsigned char *row[4];
		int ng = kc - q * G < G ? (int)(kc - q * G) : G;
		for (int g = 0; g < ng; g++)
			row[g] = b + (k0 + q * G + g) * bsk * es;
		int64_t j = 0;
#ifdef __SSE2__
		/* whole groups of 16 columns: one 64-byte row of a tile from G
		 * rows of b, interleaved by unpacks (bytes, then words) */
		for (; ng == G && j + 16 <= nr; j += 16) {
			__m128i *d = (__m128i *)(pack + ((j / 16) * nq + q) * 64);
			if (es == 1) {
				__m128i r0 = _mm_loadu_si128((const __m128i *)(row[0] + j));
				__m128i r1 = _mm_loadu_si128((const __m128i *)(row[1] + j));
				__m128i r2 = _mm_loadu_si128((const __m128i *)(row[2] + j));
				__m128i r3 = _mm_loadu_si128((const __m128i *)(row[3] + j));
				__m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
				__m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
				_mm_store_si128(d, _mm_unpacklo_epi16(lo01, lo23));
				_mm_store_si128(d + 1, _mm_unpackhi_epi16(lo01, lo23));
				_mm_store_si128(d + 2, _mm_unpacklo_epi16(hi01, hi23));
				_mm_store_si128(d + 3, _mm_unpackhi_epi16(hi01, hi23));
			} else {
				__m128i a0 = _mm_loadu_si128((const __m128i *)(row[0] + 2 * j));
				__m128i a1 = _mm_loadu_si128((const __m128i *)(row[0] + 2 * j + 16));
				__m128i b0 = _mm_loadu_si128((const __m128i *)(row[1] + 2 * j));
				__m128i b1 = _mm_loadu_si128((const __m128i *)(row[1] + 2 * j + 16));
				_mm_store_si128(d, _mm_unpacklo_epi16(a0, b0));
				_mm_store_si128(d + 1, _mm_unpackhi_epi16(a0, b0));
				_mm_store_si128(d + 2, _mm_unpacklo_epi16(a1, b1));
				_mm_store_si128(d + 3, _mm_unpackhi_epi16(a1, b1));
			}
		}
#endif
		for (; j < nr; j++)
			for (int g = 0; g < ng; g++)
				memcpy(pack + (((j / 16) * nq + q) * 16 + j % 16) * 4 + g * es,
				    row[g] + j * es, (size_t)es);
	}
}

/* Whether this process may run the tile instructions of kind (features:
 * "amx-tile,amx-int8" or "amx-tile,amx-bf16"), asked once each. */
static bool
ready(int *state, const char *features)
{
	int s = __atomic_load_n(state, __ATOMIC_ACQUIRE);
	if (!s) {
		s = txrt_cpu_has(features) && amx_permit(NULL) ? 1 : -1;
		__atomic_store_n(state, s, __ATOMIC_RELEASE);
	}
	return s > 0;
}

/* The compilers that know the tile instructions' built-ins (GCC 11,
 * Clang 12); with another, the kernels are the emulation. */
#if defined(__x86_64__) && ((defined(__clang__) && __clang_major__ >= 12) || \
    (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#include <immintrin.h>
#define HAVE_AMX 1

/* GCC's tileloadd and ldtilecfg are asm statements that take the
 * address in a register and declare no read of memory (ldtilecfg 8 bytes
 * of its 64), so the copies this kernel writes just before them (A's
 * staged tile, the packed B, the configuration) could be dropped or
 * sunk past them: a compiler barrier first keeps them. */
#define BARRIER() __asm__ volatile("" ::: "memory")
#define T_CONFIG(p) do { BARRIER(); _tile_loadconfig(p); } while (0)
#define T_LOAD(t, p, s) do { BARRIER(); _tile_loadd(t, p, s); } while (0)
#define T_STORE(t, p, s) _tile_stored(t, p, s)
#define T_ZERO(t) _tile_zero(t)
#define T_RELEASE() _tile_release()

#define AMX_FN amx_i8
#define AMX_ATTR __attribute__((target("amx-tile,amx-int8"))) static
#define AMX_ES 1
#define T_DP(c, a, b) _tile_dpbssd(c, a, b)
#include "amx_gemm.h"
#undef AMX_FN
#undef AMX_ATTR
#undef AMX_ES
#undef T_DP

#define AMX_FN amx_bf16
#define AMX_ATTR __attribute__((target("amx-tile,amx-bf16"))) static
#define AMX_ES 2
#define T_DP(c, a, b) _tile_dpbf16ps(c, a, b)
#include "amx_gemm.h"
#endif

/* txrt_amx_KIND: the tile instructions where the CPU has them and the
 * process may use them, else the emulation (one definition for both). */
#ifdef HAVE_AMX
#define AMX_HW(kind, state, features) \
	if (ready(&state, features)) { \
		amx_##kind(c, csi, a, asi, ask, b, bsk, K, mr, nr, first); \
		return; \
	}
#else
#define AMX_HW(kind, state, features) (void)state; (void)ready;
#endif
#define AMX_DISPATCH(kind, features) \
	static int kind##_state; \
	void \
	txrt_amx_##kind(void *c, int64_t csi, const void *a, int64_t asi, int64_t ask, \
	    const void *b, int64_t bsk, int64_t K, int64_t mr, int64_t nr, int64_t first) \
	{ \
		AMX_HW(kind, kind##_state, features) \
		txrt_amx_##kind##_emulated(c, csi, a, asi, ask, b, bsk, K, mr, nr, first); \
	}

AMX_DISPATCH(i8, "amx-tile,amx-int8")
AMX_DISPATCH(bf16, "amx-tile,amx-bf16")
