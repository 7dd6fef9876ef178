#!/usr/bin/env python3
"""Writes ordo's man page, ordo(1), from `ordo --help` and `ordo SUBCOMMAND --help`.

    man_page.py ORDO_BINARY OUTPUT.1 VERSION

Built at build time (target ordo_man, cmake/package.cmake), so the page says what the binary
says: every subcommand gets a section, every option a tagged paragraph. Text that is not an
option list (descriptions, examples) is kept as written, line for line.
"""
import re
import subprocess
import sys

OPTION = re.compile(r"^  (-\S.*?)(?:\s{2,}(\S.*))?$")


def roff(text):
    """Escapes one line of text for roff."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def help_text(binary, *args):
    run = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or not run.stdout.strip():
        sys.exit(f"man_page.py: `{binary} {' '.join(args)} --help` failed ({run.returncode}): {run.stderr.strip()}")
    return run.stdout


def sections(text):
    """[(heading or None, [lines])]: 'Options:' / 'Subcommands:' headings split the help."""
    out = [(None, [])]
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Za-z ]*:$", line):
            out.append((line[:-1], []))
        elif line.startswith("Usage: "):
            out.append(("Usage", [line[len("Usage: "):]]))
        else:
            out[-1][1].append(line)
    return out


def verbatim(lines):
    lines = list(lines)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return []
    return [".nf"] + [roff(line) for line in lines] + [".fi"]


def entries(lines):
    """Option (or subcommand) lines as .TP paragraphs: head in bold, description below."""
    out, current = [], None
    for line in lines:
        m = OPTION.match(line) or re.match(r"^  ([a-z][a-z-]*)(?:\s{2,}(\S.*))?$", line)
        if m:
            current = [m.group(1), [m.group(2)] if m.group(2) else []]
            out.append(current)
        elif current is not None and line.strip():
            current[1].append(line.strip())
        elif current is not None:
            current[1].append("")
    roffed = []
    for head, description in out:
        while description and not description[-1]:
            description.pop()
        roffed += [".TP", "\\fB" + roff(head) + "\\fR"]
        roffed += [".br" if not d else roff(d) for d in description]
    return roffed


def page(binary, version):
    top = help_text(binary)
    parts = sections(top)
    summary = next((line for line in parts[0][1] if line.strip()), "ordo").strip()
    summary = re.sub(r"^ordo:\s*", "", summary)
    lines = [f'.TH ORDO 1 "" "ordo {version}" "User Commands"', ".SH NAME", "ordo \\- " + roff(summary),
             ".SH SYNOPSIS", "\\fBordo\\fR \\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]", ".SH DESCRIPTION"]
    lines += verbatim(parts[0][1])
    subcommands = []
    for heading, body in parts[1:]:
        if heading == "Subcommands":
            subcommands = [m.group(1) for m in (re.match(r"^  ([a-z][a-z-]*)\s", line) for line in body) if m]
            lines += [".SH SUBCOMMANDS"] + entries(body)
        elif heading == "Options":
            lines += [".SH OPTIONS"] + entries(body)
    for name in subcommands:
        lines.append(f'.SH "ORDO {name.upper()}"')
        for heading, body in sections(help_text(binary, name)):
            if heading is None:
                lines += verbatim(body)
            elif heading == "Usage":
                lines += [".PP", "\\fBUsage:\\fR " + roff(body[0].strip())]
            else:
                lines += [f".SS {heading}"] + (entries(body) if heading in ("Options", "Subcommands", "Positionals")
                                               else verbatim(body))
    lines += [".SH FILES", ".TP", "\\fI/etc/ordo/models.json\\fR",
              "The models the ordo service serves (\\fBordo serve \\-\\-models\\fR), a conffile.", ".TP",
              "\\fI/usr/share/ordo/models\\fR", "The bundled demo models (en\\-de, de\\-en, dialogsum).", ".TP",
              "\\fI/lib/systemd/system/ordo.service\\fR", "The service: \\fBsystemctl enable \\-\\-now ordo\\fR.",
              ".SH ENVIRONMENT", ".TP", "\\fBORDO_MODELS_DIR\\fR, \\fBORDO_CONFIGS_DIR\\fR",
              "Where bundled model names and presets are looked up first.", ".TP", "\\fBORDO_CACHE_DIR\\fR",
              "The packed weights cache (default $XDG_CACHE_HOME/ordo or ~/.cache/ordo)."]
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: man_page.py ORDO_BINARY OUTPUT.1 VERSION")
    binary, output, version = sys.argv[1:]
    with open(output, "w", encoding="utf-8") as f:
        f.write(page(binary, version))


if __name__ == "__main__":
    main()
