"""pessimist: a syntactic "verifier" for SV-COMP tasks (README.md).

It never looks at values: it answers UNSAFE as soon as a label ERROR sits in main or in a
function that main may call (the call graph read from the source text), and SAFE when no such
label exists. It is the competition's "imaginary candidate" that guesses: right on every UNSAFE
task, wrong on every SAFE task that contains a reachable-looking ERROR, and the score table
ranks it with a negative sum of points. Python standard library only.
"""
import re
import sys

KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case", "goto"}


def strip(source):
    """The source without comments, string and character literals, nor preprocessor lines."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    source = re.sub(r"//[^\n]*", " ", source)
    source = re.sub(r'"(\\.|[^"\\])*"', '""', source)
    source = re.sub(r"'(\\.|[^'\\])*'", "''", source)
    return re.sub(r"^[ \t]*#[^\n]*", " ", source, flags=re.M)


def functions(source):
    """{name: body} of the function definitions at the top level."""
    out = {}
    depth, start, header = 0, None, 0
    for i, c in enumerate(source):
        if c == "{":
            if depth == 0:
                start = i
                head = source[header:i]
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start is not None:
                m = re.search(r"(\w+)\s*\([^()]*\)\s*$", head)
                if m and m.group(1) not in KEYWORDS:
                    out[m.group(1)] = source[start:i + 1]
                start, header = None, i + 1
        elif c == ";" and depth == 0:
            header = i + 1
    return out


def verdict(source):
    funs = functions(strip(source))
    if "main" not in funs:
        return "UNKNOWN", "no main function"
    seen, todo = set(), ["main"]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        body = funs[f]
        if re.search(r"\bERROR\s*:(?!:)", body):
            return "UNSAFE", f"label ERROR in {f}, reachable from main in the call graph"
        todo += [c for c in re.findall(r"\b(\w+)\s*\(", body) if c in funs and c not in seen]
    return "SAFE", f"no label ERROR in the {len(seen)} function(s) reachable from main"


def main():
    try:
        with open("program.c", encoding="utf-8", errors="replace") as f:
            source = f.read()
    except OSError as e:
        print(f"pessimist: {e}", file=sys.stderr)
        print("UNKNOWN")
        return
    answer, why = verdict(source)
    print(f"pessimist: {why}", file=sys.stderr)
    print(answer)


if __name__ == "__main__":
    main()
