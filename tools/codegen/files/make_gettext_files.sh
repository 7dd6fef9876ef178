#!/bin/sh
# The gettext catalogues of tests/files/gettext_po_test.cpp, made by gettext's own tools so the
# tests read what xgettext and msginit really write: a .pot extracted from a small C source
# (c-format strings, a plural, a context, a comment for translators, a string with a line
# break), a .po that msginit made from it for German (two entries translated, one fuzzy), and
# that .po merged by msgmerge with a changed source (a fuzzy entry with its previous msgid, an
# obsolete entry).
# Run from anywhere: sh tools/codegen/files/make_gettext_files.sh
set -eu
out="$(cd "$(dirname "$0")/../../../tests/data/files" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > hello.c <<'EOF'
#include <libintl.h>
#include <stdio.h>
#define _(s) gettext(s)
#define N_(s) s

void greet(const char* name, int files) {
  /* TRANSLATORS: shown once when the program starts. */
  printf(_("Hello, %s! Welcome back.\n"), name);
  printf(ngettext("%d file was copied.", "%d files were copied.", files), files);
  printf("%s", pgettext("menu", "Open"));
  printf("%s", _("The disk is full. Delete some files and try again."));
  printf(_("Saved %s in %d seconds."), name, files);
  puts(_("Plain text without any placeholder"));
  puts(_("This is a long message that xgettext wraps over several lines, because it is longer than a line of a catalogue."));
}
EOF
xgettext --keyword=_ --keyword=N_ --add-comments=TRANSLATORS: --package-name=hello --package-version=1.0 \
  --msgid-bugs-address=bugs@example.com --from-code=UTF-8 -o hello.pot hello.c
# Stable dates: the files are committed.
sed -i 's/^"POT-Creation-Date: .*\\n"$/"POT-Creation-Date: 2026-01-01 00:00+0000\\n"/' hello.pot
cp hello.pot "$out/hello.pot"
msginit --no-translator --locale=de_DE.UTF-8 --input=hello.pot --output-file=hello_de.po
sed -i 's/^"PO-Revision-Date: .*\\n"$/"PO-Revision-Date: 2026-01-01 00:00+0000\\n"/' hello_de.po
# Without the de_DE locale installed msginit writes charset=ASCII.
sed -i 's/charset=ASCII/charset=UTF-8/' hello_de.po
# One entry translated, one fuzzy, the rest untranslated.
python3 - hello_de.po <<'EOF'
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
text = text.replace('msgid "Open"\nmsgstr ""', 'msgid "Open"\nmsgstr "Öffnen"', 1)
text = text.replace('msgid "Plain text without any placeholder"\nmsgstr ""',
                    'msgid "Plain text without any placeholder"\nmsgstr "Einfacher Text ohne Platzhalter"', 1)
text = text.replace('#, c-format\nmsgid "Saved %s in %d seconds."\nmsgstr ""',
                    '#, fuzzy, c-format\nmsgid "Saved %s in %d seconds."\nmsgstr "%s in %d Sekunden gespeichert."', 1)
open(path, "w", encoding="utf-8").write(text)
EOF
msgfmt --check -o /dev/null hello_de.po
cp hello_de.po "$out/hello_de.po"
# The source changed one string: msgmerge marks its translation fuzzy with the old msgid (#|)
# and keeps the string that went away as an obsolete entry (#~).
sed -e 's/Plain text without any placeholder/Plain text without a placeholder/' \
    -e 's/  printf("%s", pgettext("menu", "Open"));//' hello.c > hello2.c
xgettext --keyword=_ --keyword=N_ --add-comments=TRANSLATORS: --package-name=hello --package-version=1.0 \
  --msgid-bugs-address=bugs@example.com --from-code=UTF-8 -o hello2.pot hello2.c
sed -i 's/^"POT-Creation-Date: .*\\n"$/"POT-Creation-Date: 2026-01-01 00:00+0000\\n"/' hello2.pot
msgmerge --quiet --previous -o hello_de_merged.po hello_de.po hello2.pot
msgfmt --check -o /dev/null hello_de_merged.po
cp hello_de_merged.po "$out/hello_de_merged.po"
