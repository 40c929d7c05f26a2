/* vta_stream.c: a VTA stream's bytes, and its two readable outputs.
 *
 * vta_encode packs every instruction into VTA's 16-byte format (rt/vta.h,
 * VTA-ISA.md 2) with libtxrt's encoder, the one the simulator decodes with.
 * --emit=vta-asm prints each stream: its DRAM regions, then one line an
 * instruction (index, module, fields, tokens, and the stage it comes
 * from), then the micro-op kernels.  --emit=vta-bin DIR writes, per
 * stream, NAME.insn (the instructions, 16 bytes each, little-endian),
 * NAME.uop (the micro-ops, 4 bytes each) and NAME.manifest (the DRAM
 * regions: physical address, size, tensor, direction), which txc(1)
 * documents so that other VTA tools can run the stream, and the bytes of
 * each constant tensor a region holds (NAME.TENSOR.const).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "target/vta/vta.h"

bool
vta_encode(VtaStream *s)
{
	s->bin = arena_alloc(ir_arena, (size_t)s->ninsn * TXRT_VTA_INSN_BYTES + 1);
	for (int i = 0; i < s->ninsn; i++)
		if (txrt_vta_encode(&s->insn[i].in, s->bin + (size_t)i * TXRT_VTA_INSN_BYTES) != 0) {
			char line[256];
			txrt_vta_format(&s->insn[i].in, line, sizeof line);
			diag_error(s->loc, "instruction %d of the VTA stream of '%s' has a field too "
			    "wide for its encoding: %s", i, s->name, line);
			return false;
		}
	return true;
}

static const char *
region_name(VtaDram *d)
{
	return d->buf ? d->buf->name : d->zeros ? "(zeros)" : "(micro-ops)";
}

/* The region's shape, "i8[1, 55, 55, 16]" (with " from [...]" where it
 * starts inside its tensor): a region holds the part of its tensor the
 * stream reads or writes, which need not be the whole tensor (a stride-2
 * layer's input holds the rows read). */
static const char *
region_shape(VtaDram *d)
{
	if (!d->buf)
		return arena_printf(ir_arena, "%s[%llu]", d->zeros ? "u8" : "u32",
		    (unsigned long long)(d->bytes / (d->zeros ? 1 : 4)));
	Buffer *b = d->buf;
	char *sh = arena_printf(ir_arena, "%s[", type_name(b->elem)), *from = "";
	bool shifted = false;
	for (int i = 0; i < b->ndims; i++) {
		int64_t e = 0, m = 0;
		if (!ir_is_const(b->extent[i], &e))
			bounds_const_max(b->extent[i], &e);
		if (b->min[i] && !ir_is_const(b->min[i], &m))
			m = 0;
		shifted |= m != 0;
		sh = arena_printf(ir_arena, "%s%s%lld", sh, i ? ", " : "", (long long)e);
		from = arena_printf(ir_arena, "%s%s%lld", from, i ? ", " : "", (long long)m);
	}
	return shifted ? arena_printf(ir_arena, "%s] from [%s]", sh, from) :
	    arena_printf(ir_arena, "%s]", sh);
}

static const char *
direction(VtaDram *d)
{
	return d->read && d->written ? "inout" : d->written ? "out" : "in";
}

static const char *const module_names[3] = { "load", "compute", "store" };

bool
vta_emit_asm(FILE *out, VtaFunc **vf, int n)
{
	for (int f = 0; f < n; f++)
		for (int k = 0; k < vf[f]->ns; k++) {
			VtaStream *s = vf[f]->s[k];
			fprintf(out, "; VTA stream %s: %d instructions, %d micro-ops\n", s->name,
			    s->ninsn, s->nuops);
			for (int i = 0; i < s->ndram; i++)
				fprintf(out, ";   dram 0x%08llx %10llu bytes  %-5s %s %s\n",
				    (unsigned long long)s->dram[i].phys,
				    (unsigned long long)s->dram[i].bytes, direction(&s->dram[i]),
				    region_name(&s->dram[i]), region_shape(&s->dram[i]));
			for (int i = 0; i < s->ninsn; i++) {
				char line[256];
				txrt_vta_format(&s->insn[i].in, line, sizeof line);
				fprintf(out, "%6d  %-7s %-80s ; %s\n", i,
				    module_names[txrt_vta_module(&s->insn[i].in)], line,
				    s->insn[i].what ? s->insn[i].what : "");
			}
			for (int j = 0; j < s->nkern; j++) {
				fprintf(out, "; kernel %d (uop %d..%d):", j, s->kern[j].off,
				    s->kern[j].off + s->kern[j].n);
				for (int u = 0; u < s->kern[j].n && u < 64; u++) {
					uint32_t d, x, w;
					txrt_vta_uop_decode(s->uops[s->kern[j].off + u], &d, &x, &w);
					fprintf(out, " (%u,%u,%u)", d, x, w);
				}
				fprintf(out, "%s\n", s->kern[j].n > 64 ? " ..." : "");
			}
			fputc('\n', out);
		}
	return !ferror(out);
}

static bool
write_file(const char *dir, const char *name, const char *ext, const void *data, size_t n,
    const char *text)
{
	char *path = arena_printf(ir_arena, "%s/%s.%s", dir, name, ext);
	FILE *fp = fopen(path, text ? "w" : "wb");
	if (!fp) {
		diag_error(loc_none, "cannot write '%s': %s", path, strerror(errno));
		return false;
	}
	bool ok = text ? fputs(text, fp) >= 0 : fwrite(data, 1, n, fp) == n;
	ok &= fclose(fp) == 0;
	if (!ok)
		diag_error(loc_none, "cannot write '%s': %s", path, strerror(errno));
	return ok;
}

bool
vta_emit_bin(const char *dir, VtaFunc **vf, int n)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		diag_error(loc_none, "cannot make directory '%s': %s", dir, strerror(errno));
		return false;
	}
	for (int f = 0; f < n; f++)
		for (int k = 0; k < vf[f]->ns; k++) {
			VtaStream *s = vf[f]->s[k];
			unsigned char *u = arena_alloc(ir_arena, (size_t)s->nuops * 4 + 1);
			for (int i = 0; i < s->nuops; i++)
				for (int b = 0; b < 4; b++)
					u[i * 4 + b] = (unsigned char)(s->uops[i] >> (8 * b));
			char *m = arena_printf(ir_arena, "# txc VTA stream %s (txc(1), --emit=vta-bin)\n"
			    "# config %s\n# insns %s.insn %d\n# uops %s.uop %d\n"
			    "# region: physical address, bytes, direction, tensor, shape held\n", s->name,
			    "1x16_i8w8a32_15_15_18_17", s->name, s->ninsn, s->name, s->nuops);
			for (int i = 0; i < s->ndram; i++)
				m = arena_printf(ir_arena, "%sregion 0x%llx %llu %s %s %s\n", m,
				    (unsigned long long)s->dram[i].phys,
				    (unsigned long long)s->dram[i].bytes, direction(&s->dram[i]),
				    region_name(&s->dram[i]), region_shape(&s->dram[i]));
			/* a constant tensor's region: its bytes, which no caller passes */
			for (int i = 0; i < s->ndram; i++) {
				Tensor *t = s->dram[i].buf ? s->dram[i].buf->tensor : NULL;
				if (!t || !t->is_const || !t->cdata)
					continue;
				const char *file = arena_printf(ir_arena, "%s.%s", s->name, t->name);
				size_t n = s->dram[i].bytes < t->cbytes ? s->dram[i].bytes : t->cbytes;
				if (!write_file(dir, file, "const", t->cdata, n, NULL))
					return false;
				m = arena_printf(ir_arena, "%sconst %s %s.const\n", m, t->name, file);
			}
			if (!write_file(dir, s->name, "insn", s->bin, (size_t)s->ninsn * 16, NULL) ||
			    !write_file(dir, s->name, "uop", u, (size_t)s->nuops * 4, NULL) ||
			    !write_file(dir, s->name, "manifest", NULL, 0, m))
				return false;
		}
	return true;
}
