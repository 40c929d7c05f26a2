/* amx_gemm.h: the AMX micro-kernel's body, C[mr, nr] (+)= A[mr, K]
 * B[K, nr], written once and included by amx.c (the instructions) and
 * amx_emu.c (their emulation), which define before including it
 *
 *   AMX_FN       the function's name (txrt_amx_i8, ...)
 *   AMX_ATTR     its attributes (the target features)
 *   AMX_ES       bytes of an input element: 1 (i8), 2 (bf16)
 *   T_CONFIG(p), T_LOAD(t, p, stride), T_STORE(t, p, stride), T_ZERO(t),
 *   T_DP(c, a, b), T_RELEASE()   the tile instructions
 *
 * Tiles are 16 rows of 64 bytes: tmm0-3 hold a 32 x 32 block of C (2 x 2
 * tiles of 16 x 16 32-bit sums), tmm4-5 two tiles of A (16 rows, 64 bytes
 * of k each: 64 i8 or 32 bf16), tmm6-7 two of B in the layout the dot
 * products read, each 32-bit column a group of G = 4 / AMX_ES consecutive
 * k (VNNI's): B's rows are packed so (amx_pack_b), per chunk of k that
 * fits 32 KiB, zero past K and past nr.  A is read in place (tileloadd with its row
 * stride) where a tile's 32 rows and 64 bytes of k are all in A and k is
 * contiguous; otherwise (edges, a K no multiple of the tile's k, a
 * strided k) through a zero-padded copy; a partial block of C likewise
 * through a copy, so that nothing outside the operands is read or
 * written.  first: C's block starts at zero (tilezero) instead of C.
 */
#define AMX_KT (64 / AMX_ES)        /* k a tile of A spans */
#define AMX_G (4 / AMX_ES)          /* k in one 32-bit column of B */

AMX_ATTR void
AMX_FN(void *cv, int64_t csi, const void *av, int64_t asi, int64_t ask, const void *bv,
    int64_t bsk, int64_t K, int64_t mr, int64_t nr, int64_t first)
{
	unsigned char *c = cv;
	const unsigned char *a = av, *b = bv;
	if (mr <= 0 || nr <= 0)
		return;
	if (K <= 0) {
		for (int64_t r = 0; first && r < mr; r++)
			memset(c + r * csi * 4, 0, (size_t)nr * 4);
		return;
	}
	_Alignas(64) unsigned char pack[32768];
	_Alignas(64) unsigned char abuf[2048];
	_Alignas(64) unsigned char cbuf[4096];
	AmxConfig cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	for (int t = 0; t < 8; t++)
		cfg.rows[t] = 16, cfg.colsb[t] = 64;
	T_CONFIG(&cfg);
	int64_t nt = (nr + 31) / 32 * 2;       /* B's column tiles, whole pairs */
	int64_t kcmax = (int64_t)sizeof pack / (nt * 16 * AMX_ES) / AMX_KT * AMX_KT;
	for (int64_t k0 = 0; k0 < K; k0 += kcmax) {
		int64_t kc = K - k0 < kcmax ? K - k0 : kcmax;
		int64_t nq = (kc + AMX_KT - 1) / AMX_KT * AMX_KT / AMX_G;  /* 64-byte rows a tile column */
		amx_pack_b(pack, b, bsk, k0, kc, nq, nr, AMX_ES);
		bool zero = first && k0 == 0;
		for (int64_t r0 = 0; r0 < mr; r0 += 32) {
			int64_t rows = mr - r0 < 32 ? mr - r0 : 32;
			for (int64_t c0 = 0; c0 < nr; c0 += 32) {
				int64_t cols = nr - c0 < 32 ? nr - c0 : 32;
				bool full = rows == 32 && cols == 32;
				unsigned char *cp = c + (r0 * csi + c0) * 4;
				int64_t cs = csi * 4;
				if (!full) {    /* through cbuf, 32 x 32 */
					memset(cbuf, 0, sizeof cbuf);
					for (int64_t r = 0; !zero && r < rows; r++)
						memcpy(cbuf + r * 128, cp + r * cs, (size_t)cols * 4);
					cp = cbuf;
					cs = 128;
				}
				if (zero) {
					T_ZERO(0);
					T_ZERO(1);
					T_ZERO(2);
					T_ZERO(3);
				} else {
					T_LOAD(0, cp, cs);
					T_LOAD(1, cp + 64, cs);
					T_LOAD(2, cp + 16 * cs, cs);
					T_LOAD(3, cp + 16 * cs + 64, cs);
				}
				for (int64_t s = 0; s * AMX_KT < kc; s++) {
					int64_t kk = k0 + s * AMX_KT;
					if (ask == 1 && rows == 32 && (s + 1) * AMX_KT <= kc) {
						const unsigned char *ap = a + (r0 * asi + kk) * AMX_ES;
						T_LOAD(4, ap, asi * AMX_ES);
						T_LOAD(5, ap + 16 * asi * AMX_ES, asi * AMX_ES);
					} else {
						memset(abuf, 0, sizeof abuf);
						int64_t ke = kc - s * AMX_KT < AMX_KT ? kc - s * AMX_KT : AMX_KT;
						for (int64_t r = 0; r < rows; r++)
							for (int64_t e = 0; e < ke; e++)
								memcpy(abuf + r * 64 + e * AMX_ES,
								    a + ((r0 + r) * asi + (kk + e) * ask) * AMX_ES, AMX_ES);
						T_LOAD(4, abuf, 64);
						T_LOAD(5, abuf + 1024, 64);
					}
					const unsigned char *bp = pack + ((c0 / 16) * nq + s * 16) * 64;
					T_LOAD(6, bp, 64);
					T_LOAD(7, bp + nq * 64, 64);
					T_DP(0, 4, 6);
					T_DP(1, 4, 7);
					T_DP(2, 5, 6);
					T_DP(3, 5, 7);
				}
				T_STORE(0, cp, cs);
				T_STORE(1, cp + 64, cs);
				T_STORE(2, cp + 16 * cs, cs);
				T_STORE(3, cp + 16 * cs + 64, cs);
				if (!full)
					for (int64_t r = 0; r < rows; r++)
						memcpy(c + ((r0 + r) * csi + c0) * 4, cbuf + r * 128,
						    (size_t)cols * 4);
			}
		}
	}
	T_RELEASE();
}

#undef AMX_KT
#undef AMX_G
