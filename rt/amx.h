/* amx.h: what libtxrt's AMX files share (internal): the operating
 * system's leave for the tile state (amx.c), the emulated tile
 * instructions (amx_emu.c) and the 64-byte tile configuration.
 */
#ifndef TXRT_AMX_H
#define TXRT_AMX_H

#include <stdbool.h>
#include <stdint.h>

/* ldtilecfg's operand, palette 1: per tile its bytes a row and rows */
typedef struct {
	uint8_t palette, start_row;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} AmxConfig;

/* amx.c: asks the operating system once a process for the AMX tile
 * state (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA));
 * true when granted (or no request is needed), else false with why in
 * *why when why is not NULL. */
__attribute__((visibility("hidden"))) bool amx_permit(const char **why);

/* amx.c: rows k0 .. k0+kc-1 and columns 0 .. nr-1 of b (elements of es
 * bytes, rows bsk elements apart) in the layout of B's tiles: element
 * (k0 + q*G + g, t*16 + n), G = 4 / es, at ((t*nq + q)*16 + n)*4 + g*es
 * of pack, nq 64-byte rows a tile column (kc / G rounded up to whole
 * tiles), zero past kc and past nr up to whole pairs of tiles. */
__attribute__((visibility("hidden"))) void amx_pack_b(unsigned char *pack,
    const unsigned char *b, int64_t bsk, int64_t k0, int64_t kc, int64_t nq, int64_t nr,
    int es);

/* amx_emu.c: the tile instructions on the calling thread's tile file,
 * their arithmetic as Intel documents it (tile numbers 0-7, strides in
 * bytes) */
__attribute__((visibility("hidden"))) void amx_emu_config(const AmxConfig *cfg);
__attribute__((visibility("hidden"))) void amx_emu_load(int t, const void *p, int64_t stride);
__attribute__((visibility("hidden"))) void amx_emu_store(int t, void *p, int64_t stride);
__attribute__((visibility("hidden"))) void amx_emu_zero(int t);
__attribute__((visibility("hidden"))) void amx_emu_dpbssd(int c, int a, int b);
__attribute__((visibility("hidden"))) void amx_emu_dpbf16ps(int c, int a, int b);
__attribute__((visibility("hidden"))) void amx_emu_release(void);

#endif
