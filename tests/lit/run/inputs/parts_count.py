#!/usr/bin/env python3
"""Reads the "@main's parts: C calls of F functions" line of `run --timings`
outputs and checks what repeated layers should give:

  parts_count.py UNIFORM.err ODD.err... [--merged N]

UNIFORM's parts merge at least N copies (calls - functions >= N), and each
ODD model (one layer differs from the others in an attribute or a shape)
has more functions than UNIFORM: the odd layer is not merged with the
others (and the runs of copies before and after it are cut apart).
"""
import re
import sys


def parts(path):
    with open(path) as f:
        m = re.search(r"@main's parts: (\d+) calls of (\d+) functions", f.read())
    if not m:
        sys.exit(f"{path}: no parts line")
    return int(m.group(1)), int(m.group(2))


def main():
    args = sys.argv[1:]
    merged = 1
    if "--merged" in args:
        k = args.index("--merged")
        merged = int(args[k + 1])
        del args[k:k + 2]
    calls, functions = parts(args[0])
    if calls - functions < merged:
        sys.exit(f"{args[0]}: {calls} calls of {functions} functions: fewer than {merged} copies merged")
    for odd in args[1:]:
        odd_calls, odd_functions = parts(odd)
        if odd_functions <= functions:
            sys.exit(f"{odd}: {odd_functions} functions, not more than the uniform model's {functions}")
    print("ok")


if __name__ == "__main__":
    main()
