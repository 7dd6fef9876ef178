"""Writes ordo/__init__.pyi from ordo_stub.pyi.in: the line holding @OPTIONS@ becomes one
keyword parameter per entry of ordo's table of decoding options (ordo.decode_options()), so
editors complete every option and nobody writes their list again. Run by the build
(src/python/CMakeLists.txt) with the built package on PYTHONPATH:
    python3 write_stub.py ordo_stub.pyi.in build/python/ordo/__init__.pyi"""
import sys

TYPES = {"int": "Optional[int]", "seed": "Optional[int]", "float": "Optional[float]",
         "bool": "Optional[bool]", "str": "Optional[str]"}


def main(template_path, out_path):
    sys.path.remove(sys.path[0])  # this script's folder holds the source package, not the built one
    try:
        import ordo
        specs = ordo.decode_options()
    except Exception as error:  # e.g. a sanitizer build, whose extension python3 cannot load
        print("write_stub.py: warning: cannot import the built ordo (%s); the stubs take **options" % error,
              file=sys.stderr)
        specs = None
    template = open(template_path, encoding="utf-8").read()
    lines = []
    options_indent = None  # without the table: **options before the parameter list closes
    for line in template.splitlines(keepends=True):
        if "@OPTIONS@" not in line:
            if options_indent is not None and line.lstrip().startswith(")"):
                lines.append("%s**options: object,\n" % options_indent)
                options_indent = None
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if specs is None:
            options_indent = indent
            continue
        for spec in specs:
            kind = TYPES[spec["type"]]
            if spec["name"] == "target_prefix":  # one str for all inputs, or one per input
                kind = "Union[str, Sequence[Optional[str]], None]"
            lines.append("%s%s: %s = None,\n" % (indent, spec["name"], kind))
    with open(out_path, "w", encoding="utf-8") as out:
        out.write("".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
