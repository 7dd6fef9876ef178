#!/bin/sh
# The XLIFF, JSON and subtitle files of tests/files/{xliff,json_strings,subtitles}_test.cpp, made
# by the tools translators really use, so the tests read what those tools write rather than what
# the tests' author thinks they write:
# - hello_de.xlf: translate-toolkit's po2xliff on tests/data/files/hello_de.po (gettext's own
#   catalogue, make_gettext_files.sh): a header unit, plurals as a group, a fuzzy entry as
#   needs-translation, translated and empty targets, notes and context groups. translate-toolkit
#   3.8 writes XLIFF 1.1 (its namespace and version="1.1", the shape of 1.2) and nothing here
#   writes XLIFF 2.0.
# - strings_en.json: translate-toolkit's po2json from an untranslated catalogue that json2po
#   extracted from a small i18n template (nested keys, {name}, {{count}} and %d placeholders).
# - weather.srt, weather.vtt: subtitles written by aeidon (gaupol's library, python3-aeidon,
#   which translate-toolkit's sub2po/po2sub use): five cues, a sentence over two cues, dialogue
#   lines, italics. translate-toolkit 3.8 has no WebVTT converter, so aeidon writes both.
# Needs translate-toolkit and python3-aeidon (Debian packages). Run from anywhere:
#   sh tools/codegen/files/make_translate_toolkit_files.sh
set -eu
out="$(cd "$(dirname "$0")/../../../tests/data/files" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

# XLIFF: po2xliff names the catalogue in original=, so give it a name without a path.
cp "$out/hello_de.po" hello_de.po
po2xliff --progress=none -i hello_de.po -o hello_de.xlf
cp hello_de.xlf "$out/hello_de.xlf"

# JSON: the template is the one file written by hand; what the tests read is what po2json wrote
# from it (its indentation, its escaping, no final line break).
cat > template.json <<'EOF'
{
    "greeting": "Hello {name}, welcome back!",
    "files": "%d files were copied.",
    "inbox": {
        "unread": "You have {{count}} unread messages.",
        "empty": "Your inbox is empty. Enjoy your day."
    },
    "menu": {
        "open": "Open the file",
        "quit": "Quit"
    }
}
EOF
json2po --progress=none -P -i template.json -o strings.pot
cp strings.pot strings.po
po2json --progress=none -t template.json -i strings.po -o strings_en.json
cp strings_en.json "$out/strings_en.json"

# Subtitles: aeidon's own writers (/usr/bin/python3: the Debian Python that has aeidon).
/usr/bin/python3 - <<'EOF'
import aeidon

project = aeidon.Project()
cues = [
    ("00:00:01.000", "00:00:03.000", "Hello there, my friend."),
    ("00:00:03.500", "00:00:06.000", "I wanted to tell you"),
    ("00:00:06.500", "00:00:08.250", "something important about the weather."),
    ("00:00:09.000", "00:00:11.000", "- Who is there?\n- It is me."),
    ("00:00:12.000", "00:00:14.000", "<i>The rain stops at noon.</i>"),
]
subtitles = []
for start, end, text in cues:
    subtitle = project.new_subtitle()
    subtitle.start_time = start
    subtitle.end_time = end
    subtitle.main_text = text
    subtitles.append(subtitle)
project.insert_subtitles(list(range(len(subtitles))), subtitles)
for format, path in [(aeidon.formats.SUBRIP, "weather.srt"), (aeidon.formats.WEBVTT, "weather.vtt")]:
    project.save_main(aeidon.files.new(format, path, "utf_8"), keep_changes=False)
EOF
cp weather.srt weather.vtt "$out/"
# What the tests check the output against: translate-toolkit reads the files it was given.
sub2po --progress=none -i weather.srt -o weather.po
xliff2po --progress=none -i hello_de.xlf -o hello_de_back.po
json2po --progress=none -i strings_en.json -o strings_back.po
