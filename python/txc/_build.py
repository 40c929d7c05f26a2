"""_build.py: compiling a .tx program into a cached shared library.

txc is the TXC environment variable (a path or a command name), else the
txc on PATH.  A load runs

    txc [--target=T] [-s NAME] [-D N=V]... [options] --dlpack \\
        --signature=sig.json -o lib.so FILE.tx     (source=: "-", from stdin)

in a scratch directory of the cache, then moves the library and a record
(the signature and a hash of every file txc read) into the cache.  The
cache directory is $TXC_CACHE_DIR, else $XDG_CACHE_HOME/txc, else
~/.cache/txc.  An entry's name is a hash of the source text, the file's
absolute path (or, for source=, the current directory, which relative
imports are found in), the options, $TXC_STDLIB, and txc's version and
binary (its path, size and modification time), so a rebuilt txc compiles
again.  A later load with the same key reuses the library when each file
the record lists (the imports) still has the hash it had; otherwise it
compiles again.  Each compile writes its library under a new name, because
the dynamic loader hands back an already-loaded library for a path it has
seen.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import warnings

from ._errors import CompileError, Error

_KEY_FORMAT = "txc-python-1"
_versions = {}


def find_txc():
    """The txc binary's absolute path (Error if there is none)."""
    env = os.environ.get("TXC")
    cand = env if env else "txc"
    path = shutil.which(cand)
    if path is None:
        if env:
            raise Error("TXC=%s: no such executable" % env)
        raise Error("txc is not on PATH: install it, or name it with the TXC "
                    "environment variable")
    return os.path.abspath(path)


def _stamp(txc):
    st = os.stat(txc)
    return (txc, st.st_size, st.st_mtime_ns)


def txc_version(txc):
    """`txc --version`'s version, cached per binary."""
    stamp = _stamp(txc)
    if stamp not in _versions:
        try:
            r = subprocess.run([txc, "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, check=False)
        except OSError as e:
            raise Error("cannot run %s: %s" % (txc, e)) from None
        if r.returncode != 0 or not r.stdout.startswith("txc "):
            raise Error("%s --version failed: %s" % (txc, (r.stderr or r.stdout).strip()))
        _versions[stamp] = r.stdout.split()[1]
    return _versions[stamp]


def cache_dir():
    d = os.environ.get("TXC_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "txc")
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        raise Error("cannot create the cache directory %s: %s (set TXC_CACHE_DIR to "
                    "another)" % (d, e.strerror)) from None
    return d


def _file_hash(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _fresh(record, cache):
    """Whether a cache record's library is there and its files unchanged."""
    if not os.path.exists(os.path.join(cache, record.get("so", "/"))):
        return False
    return all(_file_hash(p) == h for p, h in record.get("files", {}).items())


def compile_cached(path, source, opts):
    """(library path, signature, whether it came from the cache) for the
    program at path, or the text source, compiled with the txc options
    opts (a list of strings)."""
    txc = find_txc()
    version = txc_version(txc)
    if path is not None:
        try:
            with open(path, "rb") as f:
                text = f.read()
        except OSError as e:
            raise Error("cannot read %s: %s" % (path, e.strerror)) from None
        where = ["file", os.path.abspath(path)]
    else:
        text = source.encode("utf-8") if isinstance(source, str) else bytes(source)
        where = ["source", os.getcwd()]
    key_data = json.dumps([_KEY_FORMAT, version, list(_stamp(txc)), where, opts,
                           os.environ.get("TXC_STDLIB", "")]).encode()
    key = hashlib.sha256(key_data + b"\0" + text).hexdigest()[:40]
    cache = cache_dir()
    rec_path = os.path.join(cache, key + ".json")
    old = None
    try:
        with open(rec_path) as f:
            old = json.load(f)
        if _fresh(old, cache):
            return os.path.join(cache, old["so"]), old["signature"], True
    except (OSError, ValueError, KeyError, AttributeError):
        pass

    try:
        tmp = tempfile.mkdtemp(prefix=key[:12] + "-", dir=cache)
    except OSError as e:
        raise Error("cannot write in the cache directory %s: %s (set TXC_CACHE_DIR to "
                    "another)" % (cache, e.strerror)) from None
    try:
        so = os.path.join(tmp, "k.so")
        sig_path = os.path.join(tmp, "sig.json")
        cmd = [txc] + opts + ["--dlpack", "--signature=" + sig_path, "-o", so,
                              os.fspath(path) if path is not None else "-"]
        try:
            r = subprocess.run(cmd, input=None if path is not None else text,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        except OSError as e:
            raise Error("cannot run %s: %s" % (txc, e)) from None
        diags = r.stderr.decode("utf-8", "replace")
        if path is None:
            # txc names stdin "<stdin>"; the text came from a string
            diags = diags.replace("<stdin>:", "<string>:")
        if r.returncode != 0:
            what = os.fspath(path) if path is not None else "the source string"
            why = diags.rstrip() or ("txc was killed by signal %d" % -r.returncode
                                     if r.returncode < 0 else
                                     "txc exited with status %d" % r.returncode)
            raise CompileError("txc could not compile %s:\n%s" % (what, why),
                               diags, cmd, r.returncode)
        if diags.strip():
            warnings.warn("txc: " + diags.rstrip(), stacklevel=3)
        with open(sig_path) as f:
            sig = json.load(f)
        files = {}
        for name in sig.get("files", []):
            if name.startswith("<"):
                continue
            full = os.path.abspath(name)
            files[full] = _file_hash(full)
        so_name = "%s-%s.so" % (key, os.urandom(6).hex())
        os.replace(so, os.path.join(cache, so_name))
        record = {"so": so_name, "signature": sig, "files": files}
        with open(os.path.join(tmp, "record.json"), "w") as f:
            json.dump(record, f)
        os.replace(os.path.join(tmp, "record.json"), rec_path)
        if old and old.get("so") and old.get("so") != so_name:
            try:
                os.unlink(os.path.join(cache, old["so"]))
            except OSError:
                pass
        return os.path.join(cache, so_name), sig, False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
