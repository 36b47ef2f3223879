#!/usr/bin/env python3
"""Where a CUDA kernel's instructions go, by source line: reads the CSV that
`ncu -i REPORT --page source --print-source cuda,sass --csv` prints for a -lineinfo build (scripts/gpu-check.sh decoder
with NMC_DECODER_LINES=1 writes it as ncu-lines.csv) and prints each file's and each line's executed warp instructions
per group of `--per` texels a warp (default: 16 of the benchmark's 4096 x 4096 material with every mip).

    bench/ncu_lines.py ncu-lines.csv [--texels N] [--per 16] [--top 40]

Where the report has warp stall samples (ncu's SourceCounters section samples them), it also prints where the warps
waited: the samples by opcode and the instructions with the most samples (SASS text as ncu prints it).
"""
import argparse
import csv
import sys

# The benchmark's material: 4096 x 4096 with its full mip chain (bench/cuda_decoder_bench.cu).
BENCH_TEXELS = sum((4096 >> m) * (4096 >> m) for m in range(13))


def instruction_rows(path):
    """The report's instruction rows, read once: (function, the source line listing it as (file name, number, text) or
    None, the row, the column names of the table it is in). ncu lists an inlined instruction under more than one line
    (its own and a caller's), so one (function, address) can come more than once."""
    rows = []
    file_name = None
    function = None
    header = None
    line = None
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "File Path":
                file_name = row[1].rsplit("/", 1)[-1]
                line = None
            elif row[0] == "Function Name":
                function = row[1]
                line = None
            elif row[0] == "Line No":
                header = row
            elif header is None:
                continue
            elif row[0].isdigit():
                line = (file_name, int(row[0]), row[1].strip())
            elif row[0] == "" and len(row) > 2 and row[2].startswith("0x"):
                rows.append((function, line, row, header))
    return rows


def count(field):
    """A count as ncu prints it, possibly with thousands separators."""
    return int(field.replace(",", ""))


def line_counts(rows, path):
    """[(warp instructions executed, file name, line number, source text)] over every source line with any. Each
    instruction (function, address) counts once, for the first line that lists it in ncu's order, so the split between
    a callee's lines and its callers' is ncu's, not exact; the total is."""
    totals = {}
    seen = set()
    for function, line, row, header in rows:
        column = header.index("Instructions Executed")
        if line is None or len(row) <= column or (function, row[2]) in seen:
            continue
        seen.add((function, row[2]))
        try:
            totals[line] = totals.get(line, 0) + count(row[column])
        except ValueError:
            raise SystemExit(f"{path}: instruction {row[2]}: not a count: {row[column]!r}")
    return [(n, name, number, source) for (name, number, source), n in totals.items() if n]


STALL_COLUMN = "Warp Stall Sampling (All Samples)"


def stall_samples(rows):
    """[(stall samples, SASS text)] of every instruction (each (function, address) once), or [] where the report has no
    stall sampling column. The SASS text is the row's first field that is neither the address nor a number."""
    samples = {}
    for function, _, row, header in rows:
        if STALL_COLUMN not in header:
            continue
        column = header.index(STALL_COLUMN)
        if len(row) <= column:
            continue
        text = next((field for i, field in enumerate(row) if i != 2 and field.strip() and
                     not field.replace(",", "").replace(".", "").isdigit()), "?")
        try:
            samples[(function, row[2])] = (count(row[column] or "0"), text.strip())  # empty: none
        except ValueError:
            continue
    return [value for value in samples.values() if value[0]]


def print_stalls(stalls, top):
    total = sum(n for n, _ in stalls)
    by_opcode = {}
    for n, text in stalls:
        words = [w for w in text.split() if not w.startswith("@")]
        opcode = words[0].split(".")[0] if words else "?"
        by_opcode[opcode] = by_opcode.get(opcode, 0) + n
    print(f"{total:,} warp stall samples; by opcode (% of samples): " +
          ", ".join(f"{op} {100 * n / total:.1f}" for op, n in sorted(by_opcode.items(), key=lambda kv: -kv[1])[:16]))
    print(f"the {top} instructions with the most samples (% of samples, SASS):")
    for n, text in sorted(stalls, key=lambda v: -v[0])[:top]:
        print(f"{100 * n / total:6.2f}  {text[:110]}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--texels", type=int, default=BENCH_TEXELS,
                        help="texels the profiled launch decoded (default: the benchmark's whole-mip decode; give "
                        "the query count for a query kernel)")
    parser.add_argument("--per", type=int, default=16, help="texels a warp decodes per group (16 in the warpgroup "
                        "kernels)")
    parser.add_argument("--top", type=int, default=40, help="lines to print")
    args = parser.parse_args(argv)
    rows = instruction_rows(args.csv)
    counts = line_counts(rows, args.csv)
    if not counts:
        print(f"{args.csv}: no source lines with executed instructions (a -lineinfo build and ncu's SourceCounters "
              "section are needed)", file=sys.stderr)
        return 1
    groups = args.texels / args.per
    total = sum(c[0] for c in counts)
    print(f"{total:,} warp instructions: {total / groups:.0f} a warp per {args.per} texels")
    by_file = {}
    for executed, name, _, _ in counts:
        by_file[name] = by_file.get(name, 0) + executed
    print("by file: " + ", ".join(f"{name} {n / groups:.0f}" for name, n in
                                  sorted(by_file.items(), key=lambda kv: -kv[1])))
    print(f"the {args.top} busiest lines (a warp per {args.per} texels, file:line, source):")
    for executed, name, line, source in sorted(counts, reverse=True)[:args.top]:
        print(f"{executed / groups:7.1f}  {name}:{line}  {source[:100]}")
    stalls = stall_samples(rows)
    if stalls:
        print_stalls(stalls, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
