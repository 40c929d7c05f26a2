"""_errors.py: the exceptions the txc package raises.

Error is the base: a call the package or a kernel's entry point refused
(the entry point's message, from the library's txrt_last_error), txc
missing, an unusable argument.  CompileError is txc's own failure, with
its diagnostics (file:line:col: error: ...).  ArgumentError is a call
made with the wrong arguments (count, a missing or unknown keyword), so
it is also a TypeError, as Python's own are.
"""

import re

__all__ = ["Error", "CompileError", "ArgumentError"]


class Error(Exception):
    """A txc operation failed; str() says why.

    code is the entry point's return value when a kernel refused a call
    (1 a NULL tensor, 2 a bad size, 3 a size an exact split needs to
    divide does not, 4 out of memory, 5 a bad DLTensor, 6 a CUDA error),
    else None.
    """

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class ArgumentError(Error, TypeError):
    """A kernel called with the wrong number of tensors or keywords."""


_DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): "
                   r"(?P<kind>error|warning|note): (?P<msg>.*)$")


class CompileError(Error):
    """txc rejected the program (or could not write the library).

    diagnostics is txc's standard error as it printed it (each error as
    file:line:col: error: message, the source line and a caret);
    errors lists (file, line, column, message) for each error; command is
    the txc command line; returncode its exit status (1: errors in the
    input, 2: a file that could not be read or written).
    """

    def __init__(self, message, diagnostics="", command=(), returncode=None):
        super().__init__(message)
        self.diagnostics = diagnostics
        self.command = list(command)
        self.returncode = returncode
        self.errors = []
        for line in diagnostics.splitlines():
            m = _DIAG.match(line)
            if m and m.group("kind") == "error":
                self.errors.append((m.group("file"), int(m.group("line")),
                                    int(m.group("col")), m.group("msg")))
