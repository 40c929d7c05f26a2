/* cg_debug.c: DWARF line information for -g.
 *
 * One compile unit for the .tx file of the first kernel; a subprogram per
 * entry point and per outlined parallel body; every instruction carries
 * the line and column of the IR node it came from (IrExpr/IrStmt Loc), so
 * a debugger or profiler maps machine code back to the .tx rule or
 * schedule line.  Locations in another file (an imported kernel) go
 * through a lexical block for that file.
 */
#include <string.h>

#include "target/llvm/cg.h"

typedef struct {
	uint32_t id;
	LLVMMetadataRef file;
} FileCache;

static FileCache files[64];
static int nfiles;

static LLVMMetadataRef
di_file(Cg *cg, uint32_t id)
{
	const SrcFile *sf;
	const char *name, *slash;
	size_t dirlen;

	for (int i = 0; i < nfiles; i++)
		if (files[i].id == id)
			return files[i].file;
	sf = id ? source_get(id) : NULL;
	name = sf ? sf->name : "<none>";
	slash = strrchr(name, '/');
	dirlen = slash ? (size_t)(slash - name) : 1;
	LLVMMetadataRef f = LLVMDIBuilderCreateFile(cg->dib,
	    slash ? slash + 1 : name, strlen(slash ? slash + 1 : name),
	    slash ? name : ".", dirlen);
	if (nfiles < (int)(sizeof files / sizeof *files))
		files[nfiles++] = (FileCache){ id, f };
	return f;
}

void
cg_debug_module(Cg *cg, IrFunc **funcs, int n)
{
	uint32_t id = 0;

	nfiles = 0;
	for (int i = 0; i < n && !id; i++)
		if (funcs[i]->kernel)
			id = funcs[i]->kernel->loc.file;
	cg->dib = LLVMCreateDIBuilder(cg->mod);
	cg->di_file_id = id;
	cg->di_file = di_file(cg, id);
	cg->di_cu = LLVMDIBuilderCreateCompileUnit(cg->dib, LLVMDWARFSourceLanguageC,
	    cg->di_file, "txc", 3, 1, "", 0, 0, "", 0, LLVMDWARFEmissionFull,
	    0, 0, 0, "", 0, "", 0);
	LLVMAddModuleFlag(cg->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version",
	    18, LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx),
	    LLVMDebugMetadataVersion(), 0)));
	LLVMAddModuleFlag(cg->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version",
	    13, LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 5, 0)));
}

static int
line_of(Loc loc, int *col)
{
	int line = 0;

	*col = 0;
	if (loc.file)
		source_linecol(loc.file, loc.begin, &line, col);
	return line;
}

LLVMMetadataRef
cg_debug_subprogram(Cg *cg, const char *name, Loc loc, LLVMValueRef fn)
{
	int col, line = line_of(loc, &col);
	LLVMMetadataRef file = loc.file ? di_file(cg, loc.file) : cg->di_file;
	LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(cg->dib, file, NULL, 0,
	    LLVMDIFlagZero);
	LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(cg->dib, file, name, strlen(name),
	    name, strlen(name), file, line, ty,
	    LLVMGetLinkage(fn) == LLVMInternalLinkage, 1, line, LLVMDIFlagPrototyped, 1);

	LLVMSetSubprogram(fn, sp);
	return sp;
}

void
cg_debug_loc(Cg *cg, Loc loc)
{
	LLVMMetadataRef scope;
	int col, line;

	cg->cur_loc = loc;
	if (!cg->dib || !cg->fn || !cg->fn->di_scope)
		return;
	scope = cg->fn->di_scope;
	line = line_of(loc, &col);
	if (loc.file && loc.file != cg->di_file_id)
		scope = LLVMDIBuilderCreateLexicalBlockFile(cg->dib, scope,
		    di_file(cg, loc.file), 0);
	LLVMSetCurrentDebugLocation2(cg->b,
	    LLVMDIBuilderCreateDebugLocation(cg->ctx, line, col, scope, NULL));
}

void
cg_debug_finish(Cg *cg)
{
	LLVMDIBuilderFinalize(cg->dib);
	LLVMDisposeDIBuilder(cg->dib);
	cg->dib = NULL;
}
