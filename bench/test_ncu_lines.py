#!/usr/bin/python3
"""Self-test of bench/ncu_lines.py on a hand-written ncu source-page CSV: an instruction that ncu lists under two
lines (inlined code) counts once, for the first; lines and files sum their instructions; the per-group figure divides
by texels / per. Exit 0 pass, 1 fail. Run: /usr/bin/python3 bench/test_ncu_lines.py
"""
import io
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_lines  # noqa: E402

HEADER = '"Line No","Source","Address","Source","Instructions Executed","Thread Instructions Executed"\n'
FIXTURE = (
    '"File Path","/src/inner.h"\n'
    '"Function Name","kernel"\n' + HEADER +
    '"10","return a * b;","-","-","300","9600"\n'
    '"","","0x10","      FMUL R1, R2, R3","100","3200"\n'
    '"","","0x20","      FMUL R4, R5, R6","200","6400"\n'
    '"11","(unused line)","-","-","0","0"\n'
    '"File Path","/src/kernel.cu"\n'
    '"Function Name","kernel"\n' + HEADER +
    '"42","x = mul(a, b) + c;","-","-","700","22400"\n'
    '"","","0x20","      FMUL R4, R5, R6","200","6400"\n'  # listed again under its caller: not counted twice
    '"","","0x30","      FADD R7, R4, R8","500","16000"\n'
    '"","","...","...","-","-"\n'
)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "lines.csv")
        with open(path, "w") as f:
            f.write(FIXTURE)
        counts = sorted(ncu_lines.line_counts(ncu_lines.instruction_rows(path), path), reverse=True)
        expected = [(500, "kernel.cu", 42, "x = mul(a, b) + c;"), (300, "inner.h", 10, "return a * b;")]
        if counts != expected:
            failures.append(f"line_counts: {counts} != {expected}")
        out = io.StringIO()
        with redirect_stdout(out):
            rc = ncu_lines.main([path, "--texels", "160", "--per", "16"])
        text = out.getvalue()
        if rc != 0:
            failures.append(f"main returned {rc}")
        for wanted in ("800 warp instructions: 80 a warp per 16 texels", "by file: kernel.cu 50, inner.h 30",
                       "50.0  kernel.cu:42"):
            if wanted not in text:
                failures.append(f"output lacks {wanted!r}:\n{text}")
        empty = os.path.join(folder, "empty.csv")
        open(empty, "w").close()
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            if ncu_lines.main([empty]) != 1:
                failures.append("an empty CSV should exit 1")
    for failure in failures:
        print("FAIL:", failure)
    print("ncu_lines self-test:", "failed" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
