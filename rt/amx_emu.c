/* amx_emu.c: AMX's tile instructions emulated on a tile file in memory,
 * one a thread, and the AMX micro-kernels (amx_gemm.h) built on them:
 * txrt_amx_i8_emulated and txrt_amx_bf16_emulated, which txc's
 * TXC_AMX_EMULATE=1 calls (a test switch) so that the kernels' packing,
 * edges and tile sequence run on any x86-64; amx.c's kernels fall back
 * to them where the CPU or the operating system gives no AMX.
 *
 * The arithmetic is Intel's (the SDM's pseudo-code): tileloadd fills a
 * tile's configured rows with colsb bytes each and zeroes the rest;
 * tdpbssd adds to c[m][n] (32-bit, modulo 2^32) the four products of the
 * signed bytes a[m][4k .. 4k+3] and b[k][4n .. 4n+3] for each k below
 * a's colsb / 4; tdpbf16ps adds the even pair's f32 product, then the odd
 * one's (bf16 products are exact in f32), denormal inputs and results
 * flushed to zero as the hardware does.  A tile instruction without a
 * configuration is a bug in the kernel: it aborts with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txrt.h"
#include "amx.h"

typedef struct {
	bool configured;
	uint8_t rows[8];
	uint16_t colsb[8];
	_Alignas(64) unsigned char data[8][16][64];
} TileFile;

static _Thread_local TileFile tf;

static void
need(bool ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "libtxrt: AMX emulation: %s\n", what);
	abort();
}

void
amx_emu_config(const AmxConfig *cfg)
{
	need(cfg->palette == 1, "ldtilecfg of a palette other than 1");
	for (int t = 0; t < 8; t++) {
		need(cfg->rows[t] <= 16 && cfg->colsb[t] <= 64, "ldtilecfg past 16 rows of 64 bytes");
		tf.rows[t] = cfg->rows[t];
		tf.colsb[t] = cfg->colsb[t];
	}
	memset(tf.data, 0, sizeof tf.data);
	tf.configured = true;
}

void
amx_emu_release(void)
{
	tf.configured = false;
}

void
amx_emu_load(int t, const void *p, int64_t stride)
{
	need(tf.configured && t >= 0 && t < 8, "tileloadd without a configuration");
	memset(tf.data[t], 0, sizeof tf.data[t]);
	for (int r = 0; r < tf.rows[t]; r++)
		memcpy(tf.data[t][r], (const unsigned char *)p + r * stride, tf.colsb[t]);
}

void
amx_emu_store(int t, void *p, int64_t stride)
{
	need(tf.configured && t >= 0 && t < 8, "tilestored without a configuration");
	for (int r = 0; r < tf.rows[t]; r++)
		memcpy((unsigned char *)p + r * stride, tf.data[t][r], tf.colsb[t]);
}

void
amx_emu_zero(int t)
{
	need(tf.configured && t >= 0 && t < 8, "tilezero without a configuration");
	memset(tf.data[t], 0, sizeof tf.data[t]);
}

/* the shapes a dot product needs: c rows x colsb/4, a c's rows x K*4, b K
 * rows of c's colsb */
static void
check_dp(int c, int a, int b)
{
	need(tf.configured && c >= 0 && c < 8 && a >= 0 && a < 8 && b >= 0 && b < 8 &&
	    c != a && c != b && a != b, "a dot product's tiles must be three configured ones");
	need(tf.rows[c] == tf.rows[a] && tf.colsb[a] % 4 == 0 && tf.colsb[a] / 4 == tf.rows[b] &&
	    tf.colsb[c] == tf.colsb[b] && tf.colsb[c] % 4 == 0, "a dot product's shapes do not agree");
}

void
amx_emu_dpbssd(int c, int a, int b)
{
	check_dp(c, a, b);
	for (int m = 0; m < tf.rows[c]; m++)
		for (int n = 0; n < tf.colsb[c] / 4; n++) {
			uint32_t s;
			memcpy(&s, &tf.data[c][m][4 * n], 4);
			for (int k = 0; k < tf.colsb[a] / 4; k++)
				for (int i = 0; i < 4; i++)
					s += (uint32_t)((int32_t)(int8_t)tf.data[a][m][4 * k + i] *
					    (int32_t)(int8_t)tf.data[b][k][4 * n + i]);
			memcpy(&tf.data[c][m][4 * n], &s, 4);
		}
}

/* bf16 bits as f32, denormals as zero */
static float
bf16(const unsigned char *p)
{
	uint16_t h;
	memcpy(&h, p, 2);
	uint32_t u = (uint32_t)h << 16;
	if (!(u & 0x7f800000u))
		u &= 0x80000000u;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static float
ftz(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if (!(u & 0x7f800000u))
		u &= 0x80000000u;
	memcpy(&f, &u, 4);
	return f;
}

void
amx_emu_dpbf16ps(int c, int a, int b)
{
	check_dp(c, a, b);
	for (int m = 0; m < tf.rows[c]; m++)
		for (int n = 0; n < tf.colsb[c] / 4; n++) {
			float s;
			memcpy(&s, &tf.data[c][m][4 * n], 4);
			for (int k = 0; k < tf.colsb[a] / 4; k++)
				for (int i = 0; i < 2; i++) {
					float p = bf16(&tf.data[a][m][4 * k + 2 * i]) *
					    bf16(&tf.data[b][k][4 * n + 2 * i]);
					s = ftz(s + p);
				}
			memcpy(&tf.data[c][m][4 * n], &s, 4);
		}
}

#define T_CONFIG(p) amx_emu_config(p)
#define T_LOAD(t, p, s) amx_emu_load(t, p, s)
#define T_STORE(t, p, s) amx_emu_store(t, p, s)
#define T_ZERO(t) amx_emu_zero(t)
#define T_RELEASE() amx_emu_release()

#define AMX_FN txrt_amx_i8_emulated
#define AMX_ATTR
#define AMX_ES 1
#define T_DP(c, a, b) amx_emu_dpbssd(c, a, b)
#include "amx_gemm.h"
#undef AMX_FN
#undef AMX_ES
#undef T_DP

#define AMX_FN txrt_amx_bf16_emulated
#define AMX_ES 2
#define T_DP(c, a, b) amx_emu_dpbf16ps(c, a, b)
#include "amx_gemm.h"
